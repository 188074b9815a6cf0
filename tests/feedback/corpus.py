"""A synthetic mixed-domain feedback corpus for the theme tests (written for RunLens).

Restaurant, phone and book feedback in English, and Chinese hotel and delivery reviews, each
sentence built from a template and domain words, in a fixed order (no randomness)."""

from __future__ import annotations

from itertools import cycle, islice

RESTAURANT = [
    "The server was {adj} and our food came out {food_state}.",
    "Our waiter forgot the order and the {dish} arrived {food_state}.",
    "The {dish} was {taste} but the waiter never refilled our water.",
    "Waited forty minutes for a table even with a reservation, the hostess shrugged.",
    "The {dish} tasted {taste}, the portion was tiny for the menu price.",
    "The server did a {adj} job and the kitchen sent the wrong {dish}.",
    "Lovely patio, the {dish} and dessert menu were {taste}.",
]
PHONE = [
    "The battery drains {speed} and charging takes {duration}.",
    "After the update the phone {fault} whenever I open the camera app.",
    "The screen {screen_fault} and the battery barely lasts {duration}.",
    "Charging the phone overnight, the battery still dies by noon.",
    "The camera photos look {photo} in low light and the screen is dim.",
    "Bluetooth keeps dropping and the phone {fault} during calls.",
    "Battery life is {adj} and the charger cable stopped working.",
]
BOOK = [
    "The novel's plot {plot} and the characters felt {character}.",
    "The author writes the characters with {character} dialogue, the plot {plot}.",
    "This book has a {pace} plot and the ending chapter felt rushed.",
    "The chapters drag, the characters are {character} and the ending is predictable.",
    "A {pace} novel, the author builds the plot slowly through each chapter.",
    "The translation of the novel reads {character}, the chapters lose the author's voice.",
]
SOFTWARE = [
    "The server went down again and the dashboard shows an error page.",
    "After the last release the server times out when I upload a file to the workspace.",
    "Our admin cannot log in, the server rejects the password reset link.",
    "The dashboard export to CSV fails and the server logs show a timeout.",
    "The workspace settings page loads slowly and the upload button does nothing.",
]
HOTEL_ZH = [
    "酒店房间很干净，前台服务态度热情，早餐种类丰富。",
    "房间隔音太差，前台态度冷淡，早餐也很一般。",
    "酒店位置方便，房间有点小，前台办理入住很快。",
    "早餐难吃，房间空调坏了，前台说没有别的房间。",
]
DELIVERY_ZH = [
    "快递送货太慢了，包装破损，客服一直不回复。",
    "物流三天才到，快递员态度不好，包装也压坏了。",
    "送货速度很快，包装完好，快递员很客气。",
    "客服处理退货太慢，物流信息一直不更新。",
]
FILL = {
    "adj": ["terrible", "great", "slow", "friendly", "rude", "awful"],
    "food_state": ["cold", "late", "burnt", "lukewarm"],
    "dish": ["pasta", "steak", "salad", "burger", "soup"],
    "taste": ["bland", "delicious", "salty", "overcooked"],
    "speed": ["fast", "quickly", "overnight"],
    "duration": ["hours", "half a day", "until lunch"],
    "fault": ["freezes", "restarts", "crashes", "overheats"],
    "screen_fault": ["flickers", "cracked", "lags"],
    "photo": ["grainy", "blurry", "washed out"],
    "plot": ["wanders", "twists nicely", "drags on", "falls apart"],
    "character": ["flat", "wooden", "vivid", "stiff"],
    "pace": ["slow", "gripping", "meandering"],
}


def _fill(template: str, index: int) -> str:
    values = {key: words[(index + n) % len(words)] for n, (key, words) in enumerate(FILL.items())}
    return template.format(**values)


def domain_rows(templates: list[str], count: int, offset: int = 0) -> list[str]:
    """`count` sentences from `templates`, each template filled in turn."""
    rows = []
    for index, template in enumerate(islice(cycle(templates), count)):
        rows.append(_fill(template, index + offset))
    return rows


def mixed_corpus(per_domain: int = 120) -> tuple[list[str], list[str]]:
    """(texts, domain of each text), the domains interleaved."""
    domains = {
        "restaurant": domain_rows(RESTAURANT, per_domain),
        "phone": domain_rows(PHONE, per_domain, 1),
        "book": domain_rows(BOOK, per_domain, 2),
        "software": domain_rows(SOFTWARE, per_domain // 2),
        "hotel": domain_rows(HOTEL_ZH, per_domain // 2),
        "delivery": domain_rows(DELIVERY_ZH, per_domain // 2),
    }
    texts, labels = [], []
    longest = max(len(rows) for rows in domains.values())
    for index in range(longest):
        for domain, rows in domains.items():
            if index < len(rows):
                texts.append(rows[index])
                labels.append(domain)
    return texts, labels

"""`runlens ui`: the pages and the HTTP API over the run store (SPEC section 14).

`runlens.ui.app.create_app(UIConfig(...))` builds the application (`UIConfig` and what every
handler shares are in `runlens.ui.context`); `runlens ui` serves it.
"""

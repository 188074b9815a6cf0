// RunLens export: the one-file verdict checks itself (SPEC section 18).
// Inlined into the exported page (its hash is the CSP's only script source). It shows the
// bundle's `view` at once, then re-checks what the file says with the browser's WebCrypto:
// the verdict's Ed25519 signature, each embedded deliverable's SHA-256 against the signed
// statement, the export's own signature over every part of the page, and the cited rows'
// hashes against the source lock. The outcome goes into #runlens-check: `verified` only when
// every check holds, the altered parts named otherwise, and a plain "cannot check" when this
// browser cannot verify Ed25519. Everything read from the bundle is shown as text, except the
// `view`, which the exporter escaped. Nothing here makes a request; `window.runlensCheck`
// (a Promise of {verified, outcome, checks}) is the only name it leaves on the page.
"use strict";

(() => {
  const BUNDLE_ID = "runlens-export";
  const VIEW_ID = "runlens-view";
  const CHECK_ID = "runlens-check";
  const EXPORT_FORMAT = "runlens-export/1";
  const IN_TOTO = "application/vnd.in-toto+json";
  const EXPORT_TYPE = "application/vnd.runlens.export+json";
  const STATEMENT_TYPE = "https://in-toto.io/Statement/v1";
  const VERIFY_HINT = "run runlens verify FILE.html";
  const UNAVAILABLE = `this browser cannot check Ed25519 signatures: not checked — ${VERIFY_HINT}`;
  // RFC 8032 section 7.1, test 1: a signature any working Ed25519 accepts.
  const PROBE_KEY = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a";
  const PROBE_SIG =
    "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555" +
    "fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b";
  const MANIFEST_PARTS = [
    ["rows_sha256", "rows", "the cited rows"],
    ["reviews_sha256", "reviews", "the reviews"],
    ["view_sha256", "view", "the view"],
  ];

  class Altered extends Error {}

  const encoder = new TextEncoder();
  const utf8 = (text) => encoder.encode(text);

  // -- bytes --------------------------------------------------------------------------------

  function fromBase64(text, what) {
    if (typeof text !== "string") throw new Altered(`${what} is not base64 text`);
    let binary;
    try {
      binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
    } catch (error) {
      throw new Altered(`${what} is not base64`);
    }
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
    return bytes;
  }

  function fromHex(text) {
    const bytes = new Uint8Array(text.length / 2);
    for (let i = 0; i < bytes.length; i += 1) bytes[i] = parseInt(text.slice(2 * i, 2 * i + 2), 16);
    return bytes;
  }

  function hex(buffer) {
    return Array.from(new Uint8Array(buffer), (byte) => byte.toString(16).padStart(2, "0")).join(
      "",
    );
  }

  function concat(...parts) {
    const joined = new Uint8Array(parts.reduce((size, part) => size + part.length, 0));
    let offset = 0;
    for (const part of parts) {
      joined.set(part, offset);
      offset += part.length;
    }
    return joined;
  }

  const sha256 = async (bytes) => hex(await crypto.subtle.digest("SHA-256", bytes));

  // DSSEv1 pre-authentication encoding: `DSSEv1 LEN(type) type LEN(body) body`.
  function pae(payloadType, payload) {
    const kind = utf8(payloadType);
    return concat(utf8(`DSSEv1 ${kind.length} `), kind, utf8(` ${payload.length} `), payload);
  }

  // -- canonical JSON, as Python's json.dumps(value, ensure_ascii=False, sort_keys=True,
  //    separators=(",", ":")) writes it ------------------------------------------------------

  const ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\b": "\\b",
    "\f": "\\f",
  };

  function jsonString(text) {
    // eslint-disable-next-line no-control-regex
    const escaped = text.replace(/["\\\u0000-\u001f]/g, (char) =>
      ESCAPES[char] || `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`,
    );
    return `"${escaped}"`;
  }

  function byCodePoint(a, b) {
    const left = Array.from(a);
    const right = Array.from(b);
    for (let i = 0; i < Math.min(left.length, right.length); i += 1) {
      const difference = left[i].codePointAt(0) - right[i].codePointAt(0);
      if (difference) return difference;
    }
    return left.length - right.length;
  }

  function canonical(value) {
    if (value === null) return "null";
    if (typeof value === "string") return jsonString(value);
    if (typeof value === "boolean") return value ? "true" : "false";
    if (typeof value === "number") return JSON.stringify(value);
    if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
    const keys = Object.keys(value).sort(byCodePoint);
    return `{${keys.map((key) => `${jsonString(key)}:${canonical(value[key])}`).join(",")}}`;
  }

  // -- reading the bundle -------------------------------------------------------------------

  const isObject = (value) => typeof value === "object" && value !== null && !Array.isArray(value);

  function readBundle() {
    const scripts = document.querySelectorAll(`script#${BUNDLE_ID}`);
    if (scripts.length !== 1 || scripts[0].type !== "application/json") {
      throw new Altered("the file's embedded data is missing");
    }
    let bundle;
    try {
      bundle = JSON.parse(scripts[0].textContent);
    } catch (error) {
      throw new Altered("the file's embedded data is not JSON");
    }
    if (!isObject(bundle) || bundle.format !== EXPORT_FORMAT) {
      throw new Altered(`the file's embedded data is not a ${EXPORT_FORMAT} bundle`);
    }
    if (typeof bundle.view !== "string") throw new Altered("the file's view is missing");
    return bundle;
  }

  function showView(view) {
    const main = document.getElementById(VIEW_ID);
    main.innerHTML = view;
    main.hidden = false;
    const wanted = decodeURIComponent(location.hash.slice(1));
    const target = wanted && document.getElementById(wanted);
    if (target) target.scrollIntoView();
  }

  function envelopeParts(envelope, what) {
    if (!isObject(envelope)) throw new Altered(`${what} is not a DSSE envelope`);
    const { payloadType, payload, signatures } = envelope;
    if (typeof payloadType !== "string" || typeof payload !== "string") {
      throw new Altered(`${what}: payloadType and payload must be strings`);
    }
    if (!Array.isArray(signatures) || !signatures.length) throw new Altered(`${what} is unsigned`);
    return { payloadType, payload: fromBase64(payload, `${what}'s payload`), signatures };
  }

  function parseJson(bytes, what) {
    try {
      return JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
    } catch (error) {
      throw new Altered(`${what} is not JSON`);
    }
  }

  function fileBytes(entry, name) {
    if (!isObject(entry) || typeof entry.data !== "string") {
      throw new Altered(`${name} is not an embedded file`);
    }
    if (entry.encoding === "utf-8") return utf8(entry.data);
    if (entry.encoding === "base64") return fromBase64(entry.data, name);
    throw new Altered(`${name} has an unknown encoding`);
  }

  // -- Ed25519 ------------------------------------------------------------------------------

  async function publicKey(rawBytes, what) {
    if (rawBytes.length !== 32) throw new Altered(`${what} is not a 32-byte Ed25519 key`);
    try {
      return await crypto.subtle.importKey("raw", rawBytes, { name: "Ed25519" }, false, ["verify"]);
    } catch (error) {
      throw new Altered(`${what} is not an Ed25519 key`);
    }
  }

  async function ed25519Works() {
    if (!globalThis.crypto || !crypto.subtle) return false;
    try {
      const algorithm = { name: "Ed25519" };
      const key = await crypto.subtle.importKey("raw", fromHex(PROBE_KEY), algorithm, false, [
        "verify",
      ]);
      const signature = fromHex(PROBE_SIG);
      return (await crypto.subtle.verify(algorithm, key, signature, new Uint8Array())) === true;
    } catch (error) {
      return false;
    }
  }

  async function signatureHolds(key, parts) {
    const message = pae(parts.payloadType, parts.payload);
    for (const signature of parts.signatures) {
      if (!isObject(signature) || typeof signature.sig !== "string") continue;
      let sig;
      try {
        sig = fromBase64(signature.sig, "a signature");
      } catch (error) {
        continue;
      }
      if (await crypto.subtle.verify({ name: "Ed25519" }, key, sig, message)) return true;
    }
    return false;
  }

  async function keyOf(encoded, what) {
    const raw = fromBase64(encoded, what);
    return { raw, id: await sha256(raw) };
  }

  // -- the checks ---------------------------------------------------------------------------

  // Each check gives {ok, detail} and, when it fails, `altered`: what the banner names.
  const holds = (detail, note) => ({ ok: true, detail, note });
  const fails = (detail, altered) => ({ ok: false, detail, altered });
  const unchecked = (detail) => ({ ok: null, detail });
  const CANNOT = "this browser cannot verify Ed25519";

  async function checkSignature(context) {
    const key = await keyOf(context.bundle.verdict_key, "the verdict key");
    context.verdictKeyId = key.id;
    if (!context.ed25519) return unchecked(`not checked: ${CANNOT} (key ${key.id})`);
    const verifier = await publicKey(key.raw, "the verdict key");
    if (!(await signatureHolds(verifier, context.verdictParts))) {
      return fails(
        `the verdict's Ed25519 signature does not hold for key ${key.id}`,
        "the signed statement — its signature does not hold",
      );
    }
    const signer = context.statement.predicate?.signer?.keyid;
    if (signer !== key.id) {
      return fails(
        `the statement names signer ${signer}, but key ${key.id} signed it`,
        "the verdict key — it is not the statement's signer",
      );
    }
    return holds(`Ed25519 signature by key ${key.id} holds`);
  }

  function checkStatement(context) {
    const { statement, verdictParts, bundle } = context;
    if (verdictParts.payloadType !== IN_TOTO) {
      const found = verdictParts.payloadType;
      return fails(`payloadType ${found}, not ${IN_TOTO}`, "the statement's payload type");
    }
    if (statement._type !== STATEMENT_TYPE || !isObject(statement.predicate)) {
      return fails("the payload is no in-toto Statement v1", "the statement");
    }
    const runId = statement.predicate.run_id;
    if (runId !== bundle.run_id) {
      return fails(`the statement is of run ${runId}, the file of ${bundle.run_id}`, "the run id");
    }
    const parts = [bundle.files, bundle.omitted].filter(isObject);
    const held = (name) => parts.some((part) => Object.hasOwn(part, name));
    const unaccounted = [...context.subjects.keys()].filter((name) => !held(name)).join(", ");
    if (unaccounted) {
      return fails(
        `signed subjects neither embedded nor listed as left out: ${unaccounted}`,
        `the embedded files — ${unaccounted} missing`,
      );
    }
    return holds(`in-toto Statement v1 of run ${bundle.run_id}`);
  }

  function subjectDigests(statement) {
    const digests = new Map();
    for (const subject of Array.isArray(statement.subject) ? statement.subject : []) {
      const digest = isObject(subject) && isObject(subject.digest) ? subject.digest.sha256 : null;
      if (typeof subject?.name === "string" && typeof digest === "string") {
        digests.set(subject.name, digest);
      }
    }
    return digests;
  }

  async function checkFile(context, name) {
    const expected = context.subjects.get(name);
    const actual = await sha256(fileBytes(context.bundle.files[name], name));
    context.fileDigests.set(name, actual);
    if (expected === undefined) {
      return fails("not listed in the signed statement", `${name} — not in the signed statement`);
    }
    if (actual !== expected) {
      return fails(
        `SHA-256 ${actual}, the statement signed ${expected}`,
        `${name} — its SHA-256 is not the signed one`,
      );
    }
    return holds(`SHA-256 ${actual} as signed`);
  }

  function sameJson(a, b) {
    try {
      return canonical(a) === canonical(b);
    } catch (error) {
      return false;
    }
  }

  async function textDigest(text) {
    return typeof text === "string" ? sha256(utf8(text)) : undefined;
  }

  // The parts of this file that are not as the export manifest says, by name.
  async function manifestDifferences(context, manifest) {
    const { bundle } = context;
    const differs = [];
    for (const field of ["format", "run_id", "exported_at", "verdict_key", "page_sha256"]) {
      if (manifest[field] !== bundle[field]) differs.push(`the ${field.replace("_", " ")}`);
    }
    if (manifest.verdict_payload_sha256 !== (await sha256(context.verdictParts.payload))) {
      differs.push("the verdict");
    }
    const signed = new Map(Object.entries(isObject(manifest.files) ? manifest.files : {}));
    for (const name of new Set([...signed.keys(), ...context.fileDigests.keys()])) {
      if (signed.get(name) !== context.fileDigests.get(name)) differs.push(name);
    }
    if (!sameJson(manifest.omitted, bundle.omitted)) differs.push("the list of files left out");
    for (const [field, part, label] of MANIFEST_PARTS) {
      const digest = await textDigest(bundle[part]);
      if (digest === undefined || manifest[field] !== digest) differs.push(label);
    }
    const listDigest = bundle.row_list === null ? null : await textDigest(bundle.row_list);
    if (listDigest === undefined || manifest.row_list_sha256 !== listDigest) {
      differs.push("the row list");
    }
    return differs;
  }

  async function checkExport(context) {
    const { bundle } = context;
    const key = await keyOf(bundle.export_key, "the export key");
    context.exportKeyId = key.id;
    const parts = envelopeParts(bundle.export, "the export envelope");
    if (parts.payloadType !== EXPORT_TYPE) {
      throw new Altered(`the export envelope's payloadType is not ${EXPORT_TYPE}`);
    }
    const manifest = parseJson(parts.payload, "the export manifest");
    if (!isObject(manifest)) throw new Altered("the export manifest is not an object");
    const differs = (await manifestDifferences(context, manifest)).join(", ");
    if (!context.ed25519) {
      if (differs) return fails(`not as exported: ${differs}`, `${differs} — not as exported`);
      return unchecked(`every part as in the manifest; its signature (key ${key.id}): ${CANNOT}`);
    }
    if (!(await signatureHolds(await publicKey(key.raw, "the export key"), parts))) {
      return fails(
        `the export's Ed25519 signature does not hold for key ${key.id}`,
        "the export — its signature does not hold",
      );
    }
    if (differs) {
      return fails(`not as signed at export: ${differs}`, `${differs} — not as signed at export`);
    }
    return holds(`Ed25519 signature by key ${key.id} holds over every part of this file`);
  }

  function parseRows(text) {
    let rows;
    try {
      rows = JSON.parse(text);
    } catch (error) {
      throw new Altered("the cited rows are not JSON");
    }
    if (!Array.isArray(rows) || !rows.every((row) => isObject(row) && typeof row.id === "string")) {
      throw new Altered("the cited rows are not a list of rows");
    }
    return rows;
  }

  async function wrongHashes(rows) {
    const wrong = [];
    for (const row of rows) {
      if (row.row === null || row.row === undefined) continue;
      if (!isObject(row.row) || (await sha256(utf8(canonical(row.row)))) !== row.row_hash) {
        wrong.push(row.id);
      }
    }
    return wrong;
  }

  async function checkRows(context) {
    const { bundle, statement } = context;
    const rows = parseRows(bundle.rows);
    const wrong = (await wrongHashes(rows)).join(", ");
    if (wrong) {
      return fails(`row hash not as recomputed: ${wrong}`, `cited rows ${wrong} — not as hashed`);
    }
    const unbuilt = rows.filter((row) => row.row === null || row.row === undefined).length;
    const counted = `${rows.length} cited rows${unbuilt ? ` (${unbuilt} not rebuilt)` : ""}`;
    if (typeof bundle.row_list !== "string") {
      const note = "the cited rows are not checked against the locked source here";
      return holds(
        `${counted} hashed; not checked against the locked source here (${rows.length} rows): ` +
          "run runlens verify FILE.html --source FILE",
        note,
      );
    }
    const lock = statement.predicate?.source_lock;
    if (!isObject(lock)) return holds(`${counted} hashed; the statement holds no source lock`);
    if ((await sha256(utf8(bundle.row_list))) !== lock.rows_digest) {
      return fails(
        "the row list's SHA-256 is not the source lock's rows_digest",
        "the row list — not the locked source's rows",
      );
    }
    const lines = new Set(bundle.row_list.split("\n"));
    const missing = rows
      .filter((row) => !lines.has(`${row.id}\t${row.row_hash}`))
      .map((row) => row.id)
      .join(", ");
    if (missing) {
      const altered = `cited rows ${missing} — not in the locked source`;
      return fails(`not rows of the locked source: ${missing}`, altered);
    }
    return holds(`${counted} hashed and found in the locked source (${lock.rows_digest})`);
  }

  async function attempt(name, run) {
    try {
      return { check: name, ...(await run()) };
    } catch (error) {
      if (!(error instanceof Altered)) throw error;
      return { check: name, ...fails(error.message, error.message) };
    }
  }

  async function runChecks(bundle, ed25519) {
    const context = { bundle, ed25519, fileDigests: new Map() };
    context.verdictParts = envelopeParts(bundle.verdict, "the verdict envelope");
    context.statement = parseJson(context.verdictParts.payload, "the signed statement");
    if (!isObject(context.statement)) throw new Altered("the signed statement is not an object");
    context.subjects = subjectDigests(context.statement);
    const checks = [
      await attempt("signature", () => checkSignature(context)),
      await attempt("statement", () => checkStatement(context)),
    ];
    if (isObject(bundle.files)) {
      for (const name of Object.keys(bundle.files).sort(byCodePoint)) {
        checks.push(await attempt(`file:${name}`, () => checkFile(context, name)));
      }
    } else {
      checks.push({ check: "files", ...fails("no embedded files", "the embedded files") });
    }
    checks.push(await attempt("export", () => checkExport(context)));
    checks.push(await attempt("rows", () => checkRows(context)));
    const status = context.statement.predicate?.status;
    return {
      checks,
      verdictKeyId: context.verdictKeyId,
      exportKeyId: context.exportKeyId,
      status: typeof status === "string" ? status : "unknown",
    };
  }

  // -- the banner ---------------------------------------------------------------------------

  function element(tag, className, text) {
    const made = document.createElement(tag);
    if (className) made.className = className;
    if (text !== undefined) made.textContent = text;
    return made;
  }

  function checkList(checks) {
    const details = element("details", "check-list");
    details.append(element("summary", "", `${checks.length} checks`));
    const list = element("ul");
    for (const { check, ok, detail } of checks) {
      const state = ok === true ? "ok" : ok === false ? "failed" : "not checked";
      const item = element("li", `check-${state.replace(" ", "-")}`);
      item.append(element("code", "", check), element("span", "check-state", state), ` ${detail}`);
      list.append(item);
    }
    details.append(list);
    return details;
  }

  function show(outcome, headline, checks, note) {
    const banner = document.getElementById(CHECK_ID);
    banner.className = `check check-${outcome}`;
    document.body.dataset.check = outcome;
    banner.replaceChildren(element("p", "check-headline", headline));
    if (note) banner.append(element("p", "check-note", note));
    if (checks.length) banner.append(checkList(checks));
  }

  function outcomeOf(result) {
    const { checks, verdictKeyId, exportKeyId, status } = result;
    const failed = checks.filter((each) => each.ok === false);
    if (failed.length) {
      return ["altered", `altered: ${failed.map((each) => each.altered || each.check).join("; ")}`];
    }
    if (checks.some((each) => each.ok === null)) return ["unavailable", UNAVAILABLE];
    const other = exportKeyId && exportKeyId !== verdictKeyId;
    const exporter = other ? `; this file exported by key ${exportKeyId}` : "";
    // "verified" speaks of this file: the run it shows may have failed, and says so.
    const verdict = `the run's signed verdict (${status})`;
    return ["verified", `verified: this file is ${verdict}, signed by key ${verdictKeyId}${exporter}`];
  }

  function finish(outcome, headline, checks, note) {
    show(outcome, headline, checks, note);
    const shown = checks.map(({ check: name, ok, detail }) => ({ check: name, ok, detail }));
    return { verified: outcome === "verified", outcome, checks: shown };
  }

  function unreadable(error, name) {
    if (!(error instanceof Altered)) throw error;
    const failure = { check: name, ok: false, detail: error.message };
    show("altered", `altered: ${error.message} — ${VERIFY_HINT}`, [failure]);
    return { verified: false, outcome: "altered", checks: [failure] };
  }

  async function check() {
    let bundle;
    try {
      bundle = readBundle();
      showView(bundle.view);
    } catch (error) {
      return unreadable(error, "export");
    }
    if (!globalThis.crypto || !crypto.subtle) return finish("unavailable", UNAVAILABLE, []);
    let result;
    try {
      result = await runChecks(bundle, await ed25519Works());
    } catch (error) {
      return unreadable(error, "signature");
    }
    const [outcome, headline] = outcomeOf(result);
    const note = result.checks.map((each) => each.note).find(Boolean);
    return finish(outcome, headline, result.checks, note);
  }

  function failed(error) {
    return finish("unavailable", `this file could not check itself (${error}): ${VERIFY_HINT}`, []);
  }

  window.runlensCheck = check().catch(failed);
})();

// descgen in the browser. Every answer on this page is the command line's: `descgen ARGV` run by
// Pyodide in this page through descgen.cli.site.run_piped (stdout and stderr as when piped, the
// exit status), and each view shows the command it ran. window.descgen.run(argv, {stdin, env})
// returns {stdout, stderr, exit}: the same call, for tests and for the "command line" tab.
// The view's state is the URL's fragment (#tab=decode&w=...), so a link reproduces the view.

const manifest = await fetch("site.json").then((r) => r.json());

// ------------------------------------------------------------------------------------------
// Python: Pyodide, the archive of descgen and its dependencies, the wheels.

const timings = {};
const mark = (name) => { timings[name] = Math.round(performance.now()); };

const python = (async () => {
  const base = new URL(manifest.pyodide.url, location.href).href;
  const archive = fetch(manifest.archive).then((r) => {
    if (!r.ok) throw new Error(`${manifest.archive}: HTTP ${r.status}`);
    return r.arrayBuffer();
  });
  const { loadPyodide } = await import(base + "pyodide.mjs");
  const py = await loadPyodide({ indexURL: base });
  mark("pyodide");
  const sitePackages = py.runPython("import site; site.getsitepackages()[0]");
  py.unpackArchive(await archive, "zip", { extractDir: sitePackages });
  mark("archive");
  const wheels = manifest.wheels.map((w) => new URL(w, location.href).href);
  if (wheels.length) await py.loadPackage(wheels);
  for (const name of manifest.load_by_name) {  // (a Pyodide URL: its own repository, where it has them)
    await py.loadPackage(name).catch((error) => console.warn(`${name}: ${error}`));
  }
  mark("wheels");
  py.runPython("import importlib; importlib.invalidate_caches()\nfrom descgen.cli.site import run_piped, command_options");
  mark("import");
  return { py, runPiped: py.globals.get("run_piped"), commandOptions: py.globals.get("command_options") };
})();

/** `descgen ...argv` piped: {stdout, stderr, exit}; `stdin` is standard input, `env` is added
 * to the environment for the call. */
async function run(argv, { stdin = "", env = {} } = {}) {
  const { py, runPiped } = await python;
  const args = py.toPy(argv.map(String));
  const environ = py.toPy(env);
  try {
    const answer = runPiped(args, stdin, environ);
    const [stdout, stderr, exit] = answer.toJs();
    answer.destroy();
    return { stdout, stderr, exit };
  } finally {
    args.destroy();
    environ.destroy();
  }
}

const optionsCache = new Map();
async function commandOptions(name) {
  if (!optionsCache.has(name)) {
    const { py, commandOptions: describe } = await python;
    const answer = describe(name);
    optionsCache.set(name, answer.toJs({ dict_converter: Object.fromEntries }));
    answer.destroy();
  }
  return optionsCache.get(name);
}

// ------------------------------------------------------------------------------------------
// Small helpers.

function h(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "style") node.style.cssText = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(node.dataset, value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

const $ = (selector) => document.querySelector(selector);

/** A command line as a shell would read it: words split on blanks, '…' and "…" quoting, \ escapes. */
function shellSplit(text) {
  const words = [];
  let word = null;
  let quote = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === quote) quote = null;
      else if (c === "\\" && quote === '"' && i + 1 < text.length) word += text[++i];
      else word += c;
    } else if (/\s/.test(c)) {
      if (word !== null) words.push(word);
      word = null;
    } else {
      word ??= "";
      if (c === "'" || c === '"') quote = c;
      else if (c === "\\" && i + 1 < text.length) word += text[++i];
      else word += c;
    }
  }
  if (word !== null) words.push(word);
  return words;
}

const shellQuote = (w) => (/^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replaceAll("'", `'"'"'`)}'`);
const commandLine = (argv, stdin) => (stdin ? "… | " : "") + ["descgen", ...argv].map(shellQuote).join(" ");

/** The JSON envelopes of a --json run: one document, or several one after another (decode of
 * several words), each closing with "}" alone on its line. */
function envelopes(stdout) {
  const docs = [];
  let lines = [];
  for (const line of stdout.split("\n")) {
    lines.push(line);
    if (line === "}") {
      docs.push(JSON.parse(lines.join("\n")));
      lines = [];
    }
  }
  return docs;
}

function debounce(fn, ms) {
  let timer = null;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
}

/** Replace a node's children: nodes, text, nested arrays; null, undefined and false left out. */
function fill(node, ...children) {
  node.replaceChildren(...children.flat(Infinity).filter((c) => c !== null && c !== undefined && c !== false));
}

/** Set an input's text, leaving it (and the caret) alone when it already holds it. */
function setValue(input, text) {
  if (input.value !== text) input.value = text;
}

function pre(text, cls) {
  return text ? h("pre", { class: cls }, text) : null;
}

// ------------------------------------------------------------------------------------------
// A decoded word: fields with bits, units and sources, derived values, findings, the bit grid.

const PALETTE_SIZE = 8;

/** A field's bits "lo-hi" or "b" as [lo, hi]. */
function bitRange(bits) {
  const [lo, hi] = String(bits).split("-").map(Number);
  return [lo, hi ?? lo];
}

function showValue(value) {
  if (value === true) return "true";
  if (value === false) return "false";
  if (value === null || value === undefined) return "?";
  return String(value);
}

function decodedView(d, { onFlip } = {}) {
  const flagged = new Set((d.findings || []).map((f) => f.field));
  const head = h("div", { class: "decoded-head" },
    h("span", { class: "word" }, d.word),
    h("span", { class: "what" }, `${d.descriptor}${d.kind ? ` .kind::${d.kind}` : ""} (${d.layout}, ${d.width}-bit)`),
    d.ok ? h("span", { class: "ok" }, "✓ no error") : h("span", { class: "bad" }, "✗ breaks a PTX rule"));
  const rows = d.fields.map((f, i) => h("tr", { class: `field c${i % PALETTE_SIZE}${flagged.has(f.name) ? " flagged" : ""}`,
    title: f.description || "" },
  h("td", { class: "bits" }, f.bits), h("td", { class: "name" }, f.name), h("td", { class: "raw" }, `0x${Number(f.raw).toString(16)}`),
  h("td", {}, showValue(f.value)), h("td", {}, f.unit || ""), h("td", { class: "source" }, f.source || "")));
  const derived = Object.entries(d.derived || {});
  return h("div", { class: "decoded" }, head,
    bitGrid(d, onFlip),
    h("table", { class: "fields" }, h("thead", {}, h("tr", {}, ["bits", "field", "raw", "value", "unit", "PTX source"].map((c) => h("th", {}, c)))),
      h("tbody", {}, rows)),
    derived.length ? h("p", { class: "derived" }, "derived: ",
      derived.map(([name, v], i) => [i ? "; " : "", h("b", {}, name), ` = ${showValue(v.value)}${v.unit ? ` ${v.unit}` : ""}`])) : null,
    findingsView(d.findings || []),
    d.not_checked?.length ? h("details", { class: "not-checked" }, h("summary", {}, `${d.not_checked.length} rules not checked (their context was not given)`),
      h("ul", {}, d.not_checked.map((n) => h("li", {}, h("code", {}, n.code), ` needs ${n.missing.join(", ")}: ${n.rule} [${n.source}]`)))) : null);
}

function bitGrid(d, onFlip) {
  const word = BigInt(d.word);
  const owner = new Array(d.width);
  d.fields.forEach((f, i) => {
    const [lo, hi] = bitRange(f.bits);
    for (let b = lo; b <= hi; b++) owner[b] = i;
  });
  const flagged = new Set((d.findings || []).filter((f) => f.severity === "error").map((f) => f.field));
  const grid = h("div", { class: "bitgrid", role: "grid", "aria-label": "the word's bits; click one to flip it" });
  for (let top = d.width - 1; top >= 0; top -= 32) {
    const bottom = top - 31;
    for (let b = top; b >= bottom;) {  // the field names over their bits
      const i = owner[b];
      let end = b;
      while (end - 1 >= bottom && owner[end - 1] === i) end--;
      const f = d.fields[i];
      grid.append(h("div", { class: `label c${i % PALETTE_SIZE}`, style: `grid-column: span ${b - end + 1}`,
        title: `${f.name} (bits ${f.bits}) = ${showValue(f.value)}${f.unit ? ` ${f.unit}` : ""}` },
      b - end + 1 >= 3 ? f.name : ""));
      b = end - 1;
    }
    for (let b = top; b >= bottom; b--) {
      const i = owner[b];
      const f = d.fields[i];
      const set = (word >> BigInt(b)) & 1n;
      grid.append(h("button", { type: "button", class: `bit c${i % PALETTE_SIZE}${flagged.has(f.name) ? " flagged" : ""}`,
        dataset: { bit: String(b) }, title: `bit ${b}: ${f.name} = ${showValue(f.value)} (click: flip)`,
        onclick: onFlip ? () => onFlip(b) : undefined, disabled: !onFlip }, set ? "1" : "0"));
    }
    for (let b = top; b >= bottom; b--) {
      grid.append(h("div", { class: "index" }, b === top || b === bottom || b % 4 === 0 ? String(b) : ""));
    }
  }
  return grid;
}

/** A word with bit `bit` flipped, written with as many hex digits as `hex` has. */
function flipped(hex, bit) {
  const digits = hex.replace(/^0x/, "").length;
  return "0x" + (BigInt(hex) ^ (1n << BigInt(bit))).toString(16).padStart(digits, "0");
}

function findingsView(findings) {
  if (!findings.length) return h("p", { class: "ok" }, "✓ no findings: every field follows its PTX rule");
  return h("ul", { class: "findings" }, findings.map((f) => h("li", { class: f.severity },
    h("span", { class: "severity" }, f.severity), " ", explainButton(f.code), " ",
    `${f.field} = ${showValue(f.value)}: ${f.rule} (allowed: ${f.allowed}) `, h("span", { class: "source" }, `[${f.source}]`),
    h("div", { class: "explain", dataset: { code: f.code } }))));
}

const explained = new Map();

/** A finding's code: click shows `descgen explain CODE` (rule, source, examples) below it. */
function explainButton(code) {
  return h("button", { type: "button", class: "code", title: `descgen explain ${code}`, onclick: async (event) => {
    const box = event.currentTarget.parentElement.querySelector(":scope > .explain");
    if (box.childElementCount) {
      box.replaceChildren();
      return;
    }
    if (!explained.has(code)) explained.set(code, await run(["explain", code, "--json"]));
    const answer = explained.get(code);
    const doc = answer.exit === 0 ? JSON.parse(answer.stdout).result : null;
    fill(box, doc ? explanation(doc) : pre(answer.stderr, "stderr"));
  } }, code);
}

function explanation(doc) {
  const example = (which) => {
    const e = doc.examples?.[which];
    return e ? h("div", {}, `${which}: `, h("code", {}, e.command)) : null;
  };
  return h("div", { class: "explanation" },
    h("p", {}, h("b", {}, doc.code), ` (${doc.severity}, ${doc.applies}): ${doc.rule}`),
    h("p", { class: "source" }, `PTX: ${doc.source}`),
    doc.fields?.length ? h("p", {}, `fields: ${doc.fields.join(", ")}`) : null,
    doc.needs?.length ? h("p", {}, `needs: ${doc.needs.join(", ")}`) : null,
    example("legal"), example("illegal"),
    h("p", { class: "cmd" }, commandLine(["explain", doc.code])));
}

// ------------------------------------------------------------------------------------------
// The state in the URL.

const state = { tab: "decode", values: {} };

function writeHash() {
  const params = new URLSearchParams({ tab: state.tab });
  for (const [key, value] of Object.entries(state.values)) if (value !== "" && value !== undefined) params.set(key, value);
  const hash = "#" + params.toString();
  if (location.hash !== hash) history.replaceState(null, "", hash);
}

function readHash() {
  const params = new URLSearchParams(location.hash.slice(1));
  const tab = params.get("tab") || "decode";
  params.delete("tab");
  return { tab: TABS.some(([name]) => name === tab) ? tab : "decode", values: Object.fromEntries(params) };
}

// ------------------------------------------------------------------------------------------
// The tabs.

const DEFAULT_PTX = `.version 9.0
.target sm_100a
.address_size 64

.visible .entry kernel()
{
    .reg .pred %p<2>;
    .reg .b32 %r<20>;
    .reg .b64 %rd<20>;

    mov.u32 %r0, 0;
    setp.ne.u32 %p1, %r0, 0;
    mov.b64 %rd1, 0x4000404000010040;        // A: K-major, 128B swizzle, start 0x400
    mov.b64 %rd2, 0x4000404000010440;        // B: start 0x4400
    mov.b32 %r10, 0x08400010;                // f16, M = 128, N = 256
    tcgen05.mma.cta_group::1.kind::f16 [%r0], %rd1, %rd2, %r10, %p1;
    mov.b32 %r11, 0x10200010;                // M = 256 needs .cta_group::2
    tcgen05.mma.cta_group::1.kind::f16 [%r0], %rd1, %rd2, %r11, %p1;
    ret;
}
`;

/** The options every form leaves out: how the answer is printed is the page's business. */
const OUTPUT_OPTIONS = new Set(["as_json", "table", "plain", "fmt", "name", "quiet", "functions", "stage_bytes", "svg"]);
const SMEM_TILE = ["tile", "dtype", "major", "atom_order", "kind"];
const SMEM_FIELDS = ["lbo", "sbo", "base_offset", "lbo_mode"];

/** The forms: the command, its options shown first, those left out, fixed values, defaults. */
const FORMS = {
  idesc: { command: "idesc", title: "Instruction descriptor (idesc, 32-bit): Tables 42-44",
    main: ["kind", "m", "n", "atype", "btype", "dtype", "a_major", "b_major"], defaults: { kind: "f16", m: "128", n: "256" } },
  smem: { command: "smem", title: "Shared memory descriptor (smem, 64-bit) from its fields: Tables 40-41",
    main: ["start_address", "lbo", "sbo", "swizzle", "base_offset", "lbo_mode"], hide: SMEM_TILE,
    defaults: { start_address: "0x400", lbo: "16", sbo: "1024", swizzle: "128B" } },
  tile: { command: "smem", title: "Shared memory descriptor from an operand tile: LBO, SBO and the base offset derived",
    main: ["tile", "dtype", "major", "swizzle", "start_address"], hide: SMEM_FIELDS,
    defaults: { tile: "128x64", dtype: "bf16", major: "k", swizzle: "128B", start_address: "0x400" } },
  zcm: { command: "zcm", title: "Zero-column mask descriptor (zcm, 64-bit): Table 45",
    main: ["skip_span", "use_span", "start_count", "first_span", "column_shift", "mask_m", "mask_n"],
    defaults: { skip_span: "1", use_span: "13", start_count: "1,3,5,7", mask_m: "32", mask_n: "64" } },
  taddr: { command: "taddr", title: "Tensor memory address (32-bit): §9.7.16.1.1", main: ["lane", "column"],
    defaults: { lane: "32", column: "0" } },
  wgmma: { command: "smem", title: "Hopper wgmma shared memory descriptor (sm_90a): §9.7.15.5.1.2.2",
    main: ["start_address", "lbo", "sbo", "swizzle", "base_offset", "tile", "dtype", "major"],
    hide: ["lbo_mode", "atom_order", "kind", "ctx_arch"], fixed: ["--arch", "sm_90a"],
    defaults: { start_address: "0x400", lbo: "16", sbo: "1024", swizzle: "128B" } },
};

const TABS = [
  ["decode", "Decode"], ["idesc", "idesc"], ["smem", "smem"], ["tile", "smem from a tile"], ["zcm", "zcm"],
  ["taddr", "taddr"], ["wgmma", "wgmma (sm_90a)"], ["ptx", "PTX"], ["layout", "Layout"], ["cli", "Command line"],
];

const section = (tab) => (FORMS[tab] ? $("#tab-form") : $(`#tab-${tab}`));

let rendered = Promise.resolve();

/** Show `next` ({tab, values}): fill the tab's inputs, run its command, render; resolves when drawn. */
async function show(next) {
  formTab = null;  // (a form is filled from the state shown; an edit keeps the form it edits)
  state.tab = next.tab;
  state.values = { ...next.values };
  for (const button of document.querySelectorAll("#tabs button")) button.setAttribute("aria-selected", String(button.dataset.tab === state.tab));
  for (const s of document.querySelectorAll("main > section")) s.hidden = s !== section(state.tab);
  rendered = VIEWS[FORMS[state.tab] ? "form" : state.tab].show();
  await rendered;
  writeHash();
}

/** Re-run the current tab after an edit (debounced), keeping the URL in step. */
const refresh = debounce(() => {
  rendered = VIEWS[FORMS[state.tab] ? "form" : state.tab].show();
  rendered.then(writeHash);
}, 120);

// ---- Decode ----

async function showDecode() {
  const words = $("#words");
  const options = $("#decode-options");
  setValue(words, state.values.w ?? "0x08400010 0x4000404000010040");
  setValue(options, state.values.o ?? "");
  state.values.w = words.value;
  const argv = ["decode", "-", ...shellSplit(options.value), "--json"];
  const answer = await run(argv, { stdin: words.value });
  const out = $("#decode-out");
  let docs;
  try {
    docs = envelopes(answer.stdout);
  } catch {
    docs = [];
  }
  const picked = Object.fromEntries((state.values.r || "").split(",").filter(Boolean).map((p) => p.split(":")));
  const hexes = docs.map((doc) => doc.input?.word);
  fill(out, h("p", { class: "cmd" }, commandLine(argv, words.value), h("span", { class: "exit" }, ` exit ${answer.exit}`)),
    pre(answer.stderr, "stderr"),
    !docs.length && answer.stdout ? pre(answer.stdout) : null,
    docs.map((doc, index) => wordCard(doc, index, picked, (bit, reading) => {
      hexes[index] = flipped(reading.word, bit);
      state.values.w = hexes.filter(Boolean).join(" ");
      show({ tab: "decode", values: state.values });
    })));
}

/** One word's answer: every reading (consistent ones ✓), the chosen reading in full. */
function wordCard(doc, index, picked, onFlip) {
  if (doc.error) return h("div", { class: "card" }, pre(`${doc.error.type}: ${doc.error.message}`, "stderr"), findingsView(doc.error.findings || []));
  const results = doc.results ?? { [doc.result.kind || doc.result.descriptor]: doc.result };
  const consistent = doc.consistent ?? (doc.result?.ok ? Object.keys(results) : []);
  const names = Object.keys(results);
  const chosen = names.includes(picked[index]) ? picked[index] : consistent[0] ?? names[0];
  const body = h("div", { class: "reading" });
  const choose = (name) => {
    for (const b of card.querySelectorAll(".readings button")) b.setAttribute("aria-pressed", String(b.dataset.reading === name));
    fill(body, decodedView(results[name], { onFlip: (bit) => onFlip(bit, results[name]) }));
    picked[index] = name;
    state.values.r = Object.entries(picked).map(([i, n]) => `${i}:${n}`).join(",");
    writeHash();
  };
  const first = (r) => (r.findings || []).find((f) => f.severity === "error");
  const card = h("div", { class: "card", dataset: { word: doc.input?.word ?? "" } },
    h("h3", {}, doc.input?.word ?? "", " ",
      consistent.length ? h("span", { class: "ok" }, `✓ consistent with ${consistent.join(", ")}`) : h("span", { class: "bad" }, "✗ no consistent reading")),
    (doc.families || []).map((line) => h("p", { class: "note" }, line)),
    h("div", { class: "readings" }, names.map((name) => h("button", { type: "button", dataset: { reading: name },
      class: consistent.includes(name) ? "good" : "poor", onclick: () => choose(name),
      title: first(results[name]) ? `${first(results[name]).code}: ${first(results[name]).rule}` : "no error" },
    `${consistent.includes(name) ? "✓" : "✗"} ${name}`))),
    body);
  choose(chosen);
  return card;
}

// ---- Forms ----

async function formControls(form, options, spec, values, onChange) {
  const shown = options.filter((o) => !OUTPUT_OPTIONS.has(o.name) && !(spec.hide || []).includes(o.name));
  const main = spec.main ? shown.filter((o) => spec.main.includes(o.name) || o.required) : shown;
  main.sort((a, b) => (spec.main || []).indexOf(a.name) - (spec.main || []).indexOf(b.name));
  const more = shown.filter((o) => !main.includes(o));
  const control = (o) => {
    const id = `opt-${o.name}`;
    const value = values[o.name] ?? "";
    let input;
    if (o.flag && o.flags.length === 2) {
      input = h("select", { id, name: o.name }, h("option", { value: "" }, "not given"), o.flags.map((f) => h("option", { value: f }, f)));
    } else if (o.flag) {
      input = h("input", { id, name: o.name, type: "checkbox", checked: value === "1" });
    } else if (o.choices.length) {
      input = h("select", { id, name: o.name }, h("option", { value: "" }, o.default != null ? `default (${o.default})` : "not given"),
        o.choices.map((c) => h("option", { value: c }, c)));
    } else {
      input = h("input", { id, name: o.name, spellcheck: "false", placeholder: o.default != null ? String(o.default) : o.metavar });
    }
    if (input.type !== "checkbox") input.value = value;
    input.addEventListener(input.tagName === "SELECT" || input.type === "checkbox" ? "change" : "input", onChange);
    return h("div", { class: "control", title: o.help }, h("label", { for: id }, o.flags.join(" / ")), input);
  };
  fill(form, h("div", { class: "controls" }, main.map(control)),
    more.length ? h("details", { class: "more" }, h("summary", {}, `more options (${more.length})`), h("div", { class: "controls" }, more.map(control))) : null);
  return shown;
}

/** The values a form holds (option name -> text) and the command-line options they make. */
function formValues(form, options) {
  const values = {};
  const argv = [];
  for (const o of options) {
    const input = form.elements.namedItem(o.name);
    if (!input) continue;
    if (input.type === "checkbox") {
      if (input.checked) {
        values[o.name] = "1";
        argv.push(o.flags[0]);
      }
    } else if (input.value.trim() !== "") {
      values[o.name] = input.value.trim();
      argv.push(...(o.flag ? [input.value] : [o.flags[0], input.value.trim()]));
    }
  }
  return { values, argv };
}

let formTab = null;

async function showForm() {
  const spec = FORMS[state.tab];
  const form = $("#form");
  const options = await commandOptions(spec.command);
  const given = Object.keys(state.values).length ? state.values : spec.defaults;
  if (formTab !== state.tab) {
    formTab = state.tab;
    await formControls(form, options, spec, given, () => {
      state.values = formValues(form, options).values;
      refresh();
    });
    form.prepend(h("h2", {}, spec.title));
  }
  const { values, argv: chosen } = formValues(form, options);
  state.values = values;
  const argv = [spec.command, ...chosen, ...(spec.fixed || [])];
  const answer = await run([...argv, "--json"]);
  const drawn = options.some((o) => o.name === "svg") && answer.exit === 0 ? await picture(argv) : null;
  fill($("#form-out"), await wordAnswer(argv, answer, drawn));
}

/** An encoder's answer: the word, stderr's notes, its picture (`drawn`), the decode, what the
 * command adds (a tile's reasoning, the zero-column mask, the tensor memory access), and the word
 * as code. */
async function wordAnswer(argv, answer, drawn = null) {
  let doc = null;
  try {
    doc = JSON.parse(answer.stdout);
  } catch {
    doc = null;
  }
  const parts = [h("p", { class: "cmd" }, commandLine(argv), h("span", { class: "exit" }, ` exit ${answer.exit}`))];
  if (!doc || doc.error) {
    parts.push(pre(answer.stderr, "stderr"));
    if (doc?.error) parts.push(findingsView(doc.error.findings || []));
    return h("div", { class: "answer" }, parts);
  }
  const d = doc.result;
  const decodeAs = ["--as", d.descriptor, ...(d.kind ? ["--kind", d.kind] : [])];
  parts.push(h("p", { class: "big" }, h("span", { class: "word" }, d.word)), pre(answer.stderr, "stderr"));
  if (drawn) parts.push(drawn);
  if (doc.tile) parts.push(tileView(doc.tile));
  if (doc.mask) parts.push(h("h3", {}, "The mask"), dataView(doc.mask));
  if (doc.access) parts.push(h("h3", {}, "Which warps may access it (tcgen05.ld/st)"), dataView(doc.access));
  parts.push(decodedView(d, { onFlip: (bit) => show({ tab: "decode", values: { w: flipped(d.word, bit), o: decodeAs.join(" ") } }) }));
  parts.push(codePanel(argv));
  if (d.descriptor === "smem" || d.descriptor === "wgmma_smem") {
    parts.push(h("p", {}, h("a", { href: `#tab=layout&word=${d.word}${doc.tile ? `&dtype=${doc.tile.dtype}&major=${doc.tile.major}&tile=${doc.tile.tile.join("x")}` : ""}${d.descriptor === "wgmma_smem" ? "&arch=sm_90a" : ""}` },
      "draw its layout →")));
  }
  return h("div", { class: "answer" }, parts);
}

/** A JSON value as a table: an object's keys and values, a list of objects one row each. */
function dataView(value) {
  const cell = (v) => (Array.isArray(v) && v.every((x) => typeof x !== "object") ? v.join(", ")
    : v !== null && typeof v === "object" ? dataView(v) : showValue(v));
  if (Array.isArray(value) && value.every((v) => v && typeof v === "object" && !Array.isArray(v))) {
    const keys = [...new Set(value.flatMap(Object.keys))];
    return h("table", { class: "data" }, h("tr", {}, keys.map((k) => h("th", {}, k))),
      value.map((row) => h("tr", {}, keys.map((k) => h("td", {}, cell(row[k]))))));
  }
  if (value && typeof value === "object" && !Array.isArray(value)) {
    return h("table", { class: "data" }, Object.entries(value).map(([k, v]) => h("tr", {}, h("th", {}, k), h("td", {}, cell(v)))));
  }
  return document.createTextNode(cell(value));
}

function tileView(tile) {
  return h("div", { class: "tile" }, h("h3", {}, `Tile ${tile.tile.join(" x ")} ${tile.dtype}, ${tile.major}-major, ${tile.swizzle}`),
    h("ol", {}, (tile.reasoning || []).map((line) => h("li", {}, line))),
    h("p", {}, "canonical layout: ", h("code", {}, tile.canonical), "; CuTe: ", h("code", {}, tile.cute)));
}

/** The word as C, C++, PTX or Python: the command with --format. */
function codePanel(argv) {
  const out = h("div");
  const select = h("select", { "aria-label": "format" }, ["c", "cpp", "ptx", "python"].map((f) => h("option", { value: f }, f)));
  const draw = async () => {
    const code = [...argv, "--format", select.value];
    const answer = await run(code);
    fill(out, h("p", { class: "cmd" }, commandLine(code)), pre(answer.stdout, "code"), pre(answer.stderr, "stderr"));
  };
  select.addEventListener("change", draw);
  return h("details", { class: "code-panel", ontoggle: (e) => e.target.open && draw() },
    h("summary", {}, "the word as C, C++, PTX or Python"), select, out);
}

// ---- PTX ----

async function showPtx() {
  const text = $("#ptx");
  setValue(text, state.values.ptx ?? DEFAULT_PTX);
  setValue($("#ptx-options"), state.values.o ?? "");
  state.values.ptx = text.value;
  const argv = ["scan", "-", ...shellSplit($("#ptx-options").value)];
  const answer = await run(argv, { stdin: text.value });
  const byLine = new Map();
  const other = [];
  for (const line of answer.stdout.split("\n").filter(Boolean)) {
    const m = /^<stdin>:(\d+): (\w+): (.*)$/.exec(line);
    if (m) byLine.set(Number(m[1]), [...(byLine.get(Number(m[1])) || []), { severity: m[2], text: m[3] }]);
    else other.push(line);
  }
  const listing = h("ol", { class: "listing" }, text.value.split("\n").map((line, i) => {
    const found = byLine.get(i + 1) || [];
    const worst = found.some((f) => f.severity === "error") ? "error" : found.length ? found[0].severity : "";
    return h("li", { class: worst, dataset: { line: String(i + 1) } }, h("code", {}, line || " "),
      found.map((f) => h("div", { class: `finding ${f.severity}` }, h("span", { class: "severity" }, f.severity), " ",
        explainCode(f.text))));
  }));
  fill($("#ptx-out"), h("p", { class: "cmd" }, commandLine(argv, text.value), h("span", { class: "exit" }, ` exit ${answer.exit}`)),
    pre(answer.stderr, "stderr"), pre(other.join("\n")), listing);
}

/** A scan message whose first word is a finding code: the code made an explain button. */
function explainCode(text) {
  const m = /^([A-Z0-9]+(?:-[A-Z0-9]+)+) (.*)$/s.exec(text);
  return m ? h("span", {}, explainButton(m[1]), " ", m[2], h("div", { class: "explain" })) : text;
}

// ---- Layout picture ----

async function showLayout() {
  const form = $("#layout-form");
  const options = await commandOptions("layout");
  const values = Object.keys(state.values).length ? state.values
    : { word: "0x4000404000010040", dtype: "bf16", major: "k", tile: "128x16" };
  if (formTab !== "layout") {
    formTab = "layout";
    await formControls(form, options, { main: ["dtype", "major", "tile", "kind", "arch"] }, values, () => {
      state.values = { word: form.elements.namedItem("word").value.trim(), ...formValues(form, options).values };
      refresh();
    });
    form.prepend(h("div", { class: "controls" }, h("div", { class: "control" }, h("label", { for: "layout-word" }, "WORD"),
      h("input", { id: "layout-word", name: "word", spellcheck: "false", value: values.word ?? "", oninput: () => {
        state.values = { word: form.elements.namedItem("word").value.trim(), ...formValues(form, options).values };
        refresh();
      } }))));
  }
  const chosen = formValues(form, options);
  state.values = { word: form.elements.namedItem("word").value.trim(), ...chosen.values };
  const argv = ["layout", state.values.word, ...chosen.argv];
  const text = await run(argv);
  fill($("#layout-out"), await picture(argv),
    h("p", { class: "cmd" }, commandLine(argv), h("span", { class: "exit" }, ` exit ${text.exit}`)),
    pre(text.stdout, "grid"), pre(text.stderr, "stderr"));
}

/** The command's picture: ARGV --svg - (the SVG on stdout), or what it said instead. */
async function picture(argv) {
  const command = [...argv, "--svg", "-"];
  const drawn = await run(command);
  const svg = /^\s*(<\?xml[^>]*>\s*)?<svg[\s>]/.test(drawn.stdout)
    ? new DOMParser().parseFromString(drawn.stdout, "image/svg+xml").documentElement : null;
  return h("div", { class: "drawn" }, h("p", { class: "cmd" }, commandLine(command), h("span", { class: "exit" }, ` exit ${drawn.exit}`)),
    svg ? h("div", { class: "picture" }, document.importNode(svg, true)) : pre(drawn.stderr || "no picture", "stderr"));
}

// ---- Command line ----

async function showCli() {
  setValue($("#cli-args"), state.values.cmd ?? "decode 0x08400010 --short");
  setValue($("#cli-stdin"), state.values.stdin ?? "");
  state.values = { cmd: $("#cli-args").value, stdin: $("#cli-stdin").value };
  const argv = shellSplit(state.values.cmd.replace(/^\s*descgen\s+/, ""));
  const answer = await run(argv, { stdin: state.values.stdin });
  fill($("#cli-out"), h("p", { class: "cmd" }, commandLine(argv, state.values.stdin), h("span", { class: "exit" }, ` exit ${answer.exit}`)),
    pre(answer.stdout, "stdout"), pre(answer.stderr, "stderr"));
}

const VIEWS = { decode: { show: showDecode }, form: { show: showForm }, ptx: { show: showPtx }, layout: { show: showLayout }, cli: { show: showCli } };

// ------------------------------------------------------------------------------------------
// Start.

function wire() {
  fill($("#tabs"), ...TABS.map(([name, label]) => h("button", { type: "button", role: "tab", dataset: { tab: name },
    onclick: () => show({ tab: name, values: {} }) }, label)));
  const edit = (key, input) => input.addEventListener("input", () => {
    state.values[key] = input.value;
    refresh();
  });
  edit("w", $("#words"));
  edit("o", $("#decode-options"));
  edit("ptx", $("#ptx"));
  $("#ptx-options").addEventListener("input", () => {
    state.values.o = $("#ptx-options").value;
    refresh();
  });
  edit("cmd", $("#cli-args"));
  edit("stdin", $("#cli-stdin"));
  window.addEventListener("hashchange", () => show(readHash()));
  $("#about-link").addEventListener("click", (e) => {
    e.preventDefault();
    $("#about").scrollIntoView();
  });
  const from = manifest.pyodide.version ? `Pyodide ${manifest.pyodide.version} (Python ${manifest.pyodide.python}), from this site` : `Pyodide from ${manifest.pyodide.url}`;
  fill($("#about"), h("p", {}, `descgen ${manifest.descgen} on ${from}; `,
    manifest.distributions.map((d, i) => [i ? ", " : "", `${d.name} ${d.version}`]), "."));
  if (manifest.missing.length) {
    const missing = $("#missing");
    missing.hidden = false;
    missing.textContent = `Not in this site: ${manifest.missing.map((m) => `${m.name} (${m.why})`).join("; ")}. `
      + "Commands that need it (the terminal table, --table) fail here as in an install without it.";
  }
}

const started = performance.now();
const ready = (async () => {
  wire();
  try {
    await python;
    await show(readHash());
    mark("view");
    const ms = Math.round(performance.now() - started);
    $("#status").textContent = `Ready in ${(ms / 1000).toFixed(1)} s: descgen ${manifest.descgen} runs in this page.`;
    document.documentElement.dataset.ready = "true";
    window.descgen.readyAt = performance.now();
  } catch (error) {
    $("#status").textContent = `descgen could not start: ${error}`;
    $("#status").classList.add("bad");
    document.documentElement.dataset.ready = "failed";
    throw error;
  }
})();

window.descgen = { run, ready, manifest, timings, show: (next) => show(next).then(() => location.hash), rendered: () => rendered };

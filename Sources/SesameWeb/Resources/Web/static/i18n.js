// The page's words: the catalog's messages for this page's language, which the server places in the page as
// JSON (`<script type="application/json" id="sesame-messages">`), with the language's plural rule as a tree.
// Pages and the console read every sentence through `t` and `tn`; dates and numbers through `formatDate` and
// `formatNumber`, in the page's language.

const element = document.getElementById("sesame-messages");
const data = element ? JSON.parse(element.textContent) : { lang: "en", dir: "ltr", plural: ["!=", "n", 1], messages: {} };

/** The page's language tag (`ko`, `ar`, …) and direction (`ltr`, `rtl`). */
export const locale = data.lang === "en-XA" ? "en" : data.lang;
export const direction = data.dir;

const englishRule = ["!=", "n", 1];

// The plural rule: `"n"`, a number, `["!", x]`, `[op, left, right]` or `["?", condition, then, else]`.
function evaluate(node, n) {
  if (node === "n") return n;
  if (typeof node === "number") return node;
  const [op, a, b, c] = node;
  if (op === "?") return evaluate(a, n) !== 0 ? evaluate(b, n) : evaluate(c, n);
  if (op === "!") return evaluate(a, n) === 0 ? 1 : 0;
  const l = evaluate(a, n);
  if (op === "&&") return l !== 0 && evaluate(b, n) !== 0 ? 1 : 0;
  if (op === "||") return l !== 0 || evaluate(b, n) !== 0 ? 1 : 0;
  const r = evaluate(b, n);
  switch (op) {
    case "%": return r === 0 ? 0 : l % r;
    case "/": return r === 0 ? 0 : Math.trunc(l / r);
    case "*": return l * r;
    case "+": return l + r;
    case "-": return l - r;
    case "<": return l < r ? 1 : 0;
    case "<=": return l <= r ? 1 : 0;
    case ">": return l > r ? 1 : 0;
    case ">=": return l >= r ? 1 : 0;
    case "==": return l === r ? 1 : 0;
    default: return l !== r ? 1 : 0;
  }
}

/** The plural form index for `n` by a rule tree; exported for the catalog tests. */
export function pluralIndex(rule, n, count) {
  const index = evaluate(rule, n);
  return index >= 0 && index < count ? index : count - 1;
}

function fill(text, values) {
  return text.replace(/\{([a-zA-Z][a-zA-Z0-9_]*)\}/g, (whole, name) =>
    Object.prototype.hasOwnProperty.call(values, name) ? String(values[name]) : whole);
}

/** The message `key` with its `{placeholders}` filled from `values`. A key the page lacks shows as itself. */
export function t(key, values = {}) {
  const message = data.messages[key];
  if (typeof message !== "string") return key;
  return fill(message, values);
}

/** The plural message `key` for `count`, with `{count}` written in the page's language. */
export function tn(key, count, values = {}) {
  const message = data.messages[key];
  if (!message || !Array.isArray(message.forms)) return key;
  const rule = message.english ? englishRule : data.plural;
  const form = message.forms[pluralIndex(rule, count, message.forms.length)];
  return fill(form, { ...values, count: formatNumber(count) });
}

/** A number as the page's language writes it. */
export function formatNumber(value) {
  return new Intl.NumberFormat(locale).format(value);
}

/** A date and time as the page's language writes it (`style`: Intl.DateTimeFormat options). */
export function formatDateIn(value, style = { dateStyle: "medium", timeStyle: "short" }) {
  const date = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(date.getTime())) return "";
  return new Intl.DateTimeFormat(locale, style).format(date);
}

/** The languages a person can choose (the catalog's shipped ones): `{ tag, name }`, each name in its own language. */
export const languages = Array.isArray(data.languages) ? data.languages : [];

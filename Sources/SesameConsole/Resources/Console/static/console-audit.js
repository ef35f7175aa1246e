// The audit log page: filters in the address (so a filtered view can be linked), pages of events newest first
// from GET /api/admin/audit with its `next` cursor, and the CSV link for the same filters.

import { admin, el, say, formatDate, AdminFailure, t, tn } from "/console/static/console.js";

// An event's outcome in the page's language; one without a name shows its code.
function outcomeName(outcome) {
  switch (outcome) {
    case "success": return t("console.audit.outcome-success");
    case "failure": return t("console.audit.outcome-failure");
    case "refused": return t("console.audit.outcome-refused");
    case "pending_second_factor": return t("console.audit.outcome-pending-second-factor");
    default: return outcome.replaceAll("_", " ");
  }
}

const form = document.getElementById("filters");
const body = document.querySelector("#events tbody");
const more = document.getElementById("more");
const csv = document.getElementById("csv");
const summary = document.getElementById("summary");
const kinds = document.getElementById("kinds");
const names = ["person", "kind", "outcome", "from", "to"];
let next = null;
let shown = 0;

/** A `datetime-local` value (the browser's local time) as an ISO 8601 instant, or "". */
function instant(local) {
  if (!local) return "";
  const date = new Date(local);
  return Number.isNaN(date.getTime()) ? "" : date.toISOString();
}

/** The filters as the API's query (times as instants). */
function apiQuery() {
  const query = new URLSearchParams();
  for (const name of names) {
    const value = form.elements[name].value.trim();
    if (!value) continue;
    query.set(name, name === "from" || name === "to" ? instant(value) : value);
  }
  return query;
}

/** The filters as this page's own address (times as typed). */
function pageQuery() {
  const query = new URLSearchParams();
  for (const name of names) {
    const value = form.elements[name].value.trim();
    if (value) query.set(name, value);
  }
  return query;
}

// Each cell carries its column's name, which the narrow layout shows beside the value (one card per event).
function cell(label, options, ...children) {
  return el("td", { ...options, dataset: { label } }, ...children);
}

function personCell(event) {
  if (!event.userId) return cell(t("console.audit.person"), { class: "muted", text: event.username || t("console.common.none-dash") });
  const link = el("a", { href: `/console/people?id=${encodeURIComponent(event.userId)}` }, event.username || event.userId);
  return cell(t("console.audit.person"), {}, link);
}

// An event about an app (an OpenID Connect client) links to that app on the apps page, which opens it.
function appCell(event) {
  if (!event.clientId) return cell(t("console.audit.app"), { class: "muted", text: t("console.common.none-dash") });
  const link = el("a", { href: `/console/apps?app=${encodeURIComponent(event.clientId)}` }, el("code", { text: event.clientId }));
  return cell(t("console.audit.app"), {}, link);
}

// An event's kind by its name in the page's language (`console.audit-kind.<kind>`), with the kind itself beside it
// as the filter takes it; a kind newer than the catalog shows as the kind alone.
function kindName(kind) {
  const key = `console.audit-kind.${kind}`;
  const name = t(key);
  return name === key ? null : name;
}

function kindCell(kind) {
  const name = kindName(kind);
  const code = el("code", { class: name ? "muted kind" : "kind", text: kind });
  return cell(t("console.audit.kind"), { "data-kind": kind }, name ? el("span", {}, name, el("br"), code) : code);
}

function row(event) {
  return el(
    "tr",
    {},
    cell(t("console.common.when"), {}, el("time", { datetime: event.at, text: formatDate(event.at) })),
    kindCell(event.kind),
    cell(t("console.common.outcome"), { class: `outcome-${event.outcome}`, text: outcomeName(event.outcome) }),
    personCell(event),
    appCell(event),
    cell(t("console.audit.address"), {}, el("code", { text: event.clientAddress })),
    cell(t("console.common.detail"), { text: event.detail }),
  );
}

function fillKinds(list) {
  if (kinds.childElementCount || !Array.isArray(list)) return;
  for (const kind of list) kinds.append(el("option", { value: kind, label: kindName(kind) || kind }));
}

async function load(append) {
  const query = apiQuery();
  if (append && next) query.set("after", next);
  more.disabled = true;
  try {
    const page = await admin("GET", `/api/admin/audit?${query}`);
    if (!append) {
      body.replaceChildren();
      shown = 0;
    }
    for (const event of page.events) body.append(row(event));
    shown += page.events.length;
    next = page.next || null;
    more.hidden = !next;
    fillKinds(page.kinds);
    summary.textContent = shown === 0 ? t("console.audit.no-events") : tn("console.audit.shown", shown);
    say("");
  } catch (failure) {
    say(failure instanceof AdminFailure ? failure.message : t("console.audit.unreadable"), "error");
  } finally {
    more.disabled = false;
  }
}

function apply() {
  const query = pageQuery();
  history.replaceState(null, "", query.toString() ? `/console/audit?${query}` : "/console/audit");
  const api = apiQuery();
  csv.href = api.toString() ? `/api/admin/audit.csv?${api}` : "/api/admin/audit.csv";
  next = null;
  return load(false);
}

const initial = new URLSearchParams(location.search);
for (const name of names) {
  const value = initial.get(name);
  if (value !== null) form.elements[name].value = value;
}
form.addEventListener("submit", (event) => {
  event.preventDefault();
  apply();
});
document.getElementById("clear").addEventListener("click", () => {
  form.reset();
  apply();
});
more.addEventListener("click", () => load(true));
apply();

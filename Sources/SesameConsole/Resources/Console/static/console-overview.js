// The Overview: the figures of `GET /api/admin/overview`, shown in cards and two tables, refreshed on demand.

import { admin, el, say, formatDate } from "./console.js";

const METHODS = {
  passkey: "Passkey",
  password: "Password",
  second_factor: "Second factor",
  "email_recovery.signed_in": "Recovery by email",
  "recovery_link.used": "Recovery link",
};

function set(id, text) {
  const node = document.getElementById(id);
  if (node) node.textContent = text;
}

function plural(count, one, many) {
  return `${count.toLocaleString()} ${count === 1 ? one : many}`;
}

function days(count) {
  return count === 0 ? "today" : `${plural(count, "day", "days")} ago`;
}

function rows(id, items, empty, cells) {
  const body = document.getElementById(id);
  body.replaceChildren();
  if (items.length === 0) {
    body.append(el("tr", {}, el("td", { colspan: 4, class: "muted", text: empty })));
    return;
  }
  for (const item of items) body.append(el("tr", {}, ...cells(item).map((cell) => el("td", {}, cell))));
}

function show(data) {
  set("accounts-total", data.accounts.total.toLocaleString());
  set("accounts-disabled", `${plural(data.accounts.disabled, "disabled", "disabled")}`);

  const total = data.signIns.byMethod.reduce((sum, method) => sum + method.count, 0);
  set("signins-total", total.toLocaleString());
  const methods = document.getElementById("signins-methods");
  methods.replaceChildren(
    ...data.signIns.byMethod.map((m) =>
      el("li", { dataset: { method: m.method } }, `${METHODS[m.method] || m.method}: ${m.count.toLocaleString()}`),
    ),
  );
  set("signins-failed", `${plural(data.signIns.failed, "failed sign-in", "failed sign-ins")} since midnight UTC`);

  set("outbox-queued", plural(data.outbox.queued, "mail waiting", "mails waiting"));
  set(
    "outbox-detail",
    data.outbox.queued === 0
      ? "Nothing to send."
      : `${plural(data.outbox.failing, "failing", "failing")}; oldest written ${formatDate(data.outbox.oldest)}`,
  );

  if (data.metadata) {
    set("metadata-number", `BLOB ${data.metadata.number}`);
    set(
      "metadata-detail",
      `${plural(data.metadata.entries, "entry", "entries")}; imported ${days(data.metadata.ageDays)}; next update ${data.metadata.nextUpdate}`,
    );
  } else {
    set("metadata-number", "None");
    set("metadata-detail", "No BLOB imported (sesame metadata import).");
  }

  rows("keys", data.signingKeys, "No signing keys yet: made at the first token.", (key) => [
    el("span", { class: "code", text: key.kid }),
    key.algorithm,
    days(key.ageDays),
    key.retiredAt ? `Retired ${formatDate(key.retiredAt)}` : "In use",
  ]);
  set("version", data.version);
  rows("nodes", data.nodes, "No server has said it is running in the last minute.", (node) => [
    el("span", { class: "code", text: node.id }),
    node.version,
    formatDate(node.startedAt),
    formatDate(node.lastSeenAt),
  ]);
  document.getElementById("figures").setAttribute("aria-busy", "false");
}

async function load() {
  const button = document.getElementById("refresh");
  button.disabled = true;
  try {
    show(await admin("GET", "/api/admin/overview"));
    say(`Figures as of ${formatDate(new Date().toISOString())}.`);
  } catch (failure) {
    say(failure.message, "error");
  } finally {
    button.disabled = false;
  }
}

document.getElementById("refresh").addEventListener("click", load);
load();

// The Overview: the figures of GET /api/admin/overview, shown in cards and two tables, refreshed on demand.

import { admin, el, say, formatDate, formatDay, t, tn, formatNumber } from "./console.js";

// The sign-in methods' names; a method without one shows its code.
function methodName(method) {
  switch (method) {
    case "passkey": return t("console.overview.method-passkey");
    case "password": return t("console.overview.method-password");
    case "second_factor": return t("console.overview.method-second-factor");
    case "email_recovery.signed_in": return t("console.overview.method-email-recovery");
    case "recovery_link.used": return t("console.overview.method-recovery-link");
    default: return method;
  }
}

function set(id, text) {
  const node = document.getElementById(id);
  if (node) node.textContent = text;
}

function days(count) {
  return count === 0 ? t("console.overview.today") : tn("console.overview.days-ago", count);
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
  set("accounts-total", formatNumber(data.accounts.total));
  set("accounts-disabled", tn("console.overview.disabled", data.accounts.disabled));

  const total = data.signIns.byMethod.reduce((sum, method) => sum + method.count, 0);
  set("signins-total", formatNumber(total));
  const methods = document.getElementById("signins-methods");
  methods.replaceChildren(
    ...data.signIns.byMethod.map((m) =>
      el("li", { dataset: { method: m.method } }, t("console.overview.method-count", { method: methodName(m.method), count: formatNumber(m.count) })),
    ),
  );
  set("signins-failed", tn("console.overview.failed-signins", data.signIns.failed));

  set("outbox-queued", tn("console.overview.mails-waiting", data.outbox.queued));
  set(
    "outbox-detail",
    data.outbox.queued === 0
      ? t("console.overview.nothing-to-send")
      : tn("console.overview.outbox-failing", data.outbox.failing, { oldest: formatDate(data.outbox.oldest) }),
  );

  if (data.metadata) {
    set("metadata-number", t("console.overview.blob-number", { number: data.metadata.number }));
    set(
      "metadata-detail",
      t("console.overview.metadata-detail", {
        entries: tn("console.overview.entries", data.metadata.entries),
        imported: days(data.metadata.ageDays),
        next: formatDay(data.metadata.nextUpdate),
      }),
    );
  } else {
    set("metadata-number", t("console.overview.no-blob"));
    set("metadata-detail", t("console.overview.no-blob-detail"));
  }

  rows("keys", data.signingKeys, t("console.overview.no-keys"), (key) => [
    el("span", { class: "code", text: key.kid }),
    key.algorithm,
    days(key.ageDays),
    key.retiredAt ? t("console.overview.retired-at", { date: formatDate(key.retiredAt) }) : t("console.overview.in-use"),
  ]);
  set("version", data.version);
  rows("nodes", data.nodes, t("console.overview.no-nodes"), (node) => [
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
    say(t("console.overview.as-of", { date: formatDate(new Date().toISOString()) }));
  } catch (failure) {
    say(failure.message, "error");
  } finally {
    button.disabled = false;
  }
}

document.getElementById("refresh").addEventListener("click", load);
load();

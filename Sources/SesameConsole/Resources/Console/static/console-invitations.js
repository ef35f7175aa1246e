// Invitations: list, create (email, groups, expiry; the link shown once when no mail carries it), revoke.

import { admin, el, say, formatDate, t } from "/console/static/console.js";

function stateName(state) {
  switch (state) {
    case "usable": return t("console.invitations.usable");
    case "used": return t("console.invitations.used");
    case "revoked": return t("console.invitations.revoked");
    case "expired": return t("console.invitations.expired");
    default: return state;
  }
}

const body = document.getElementById("invitations");

async function load() {
  const { invitations } = await admin("GET", "/api/admin/invitations");
  body.replaceChildren(
    ...invitations.map((invitation) =>
      el(
        "tr",
        {},
        el("td", {}, el("code", { text: invitation.id })),
        el("td", { text: stateName(invitation.state) }),
        el("td", { text: invitation.email || t("console.common.none-dash") }),
        el("td", { text: invitation.groups.length ? invitation.groups.join(t("console.common.list-separator")) : t("console.common.none-dash") }),
        el("td", { text: formatDate(invitation.expiresAt) }),
        el(
          "td",
          {},
          invitation.state === "usable"
            ? el(
                "button",
                { type: "button", class: "danger", "aria-label": t("console.invitations.revoke-label", { id: invitation.id }), dataset: { id: invitation.id } },
                t("console.invitations.revoke"),
              )
            : null,
        ),
      ),
    ),
  );
  if (invitations.length === 0) body.append(el("tr", {}, el("td", { colspan: "6", class: "muted", text: t("console.invitations.none") })));
}

async function run(action, done) {
  try {
    await action();
    if (done) say(done, "success");
  } catch (error) {
    say(error.message, "error");
  }
}

document.getElementById("create").addEventListener("submit", (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  run(async () => {
    const groups = form.groups.value
      .split(",")
      .map((slug) => slug.trim())
      .filter(Boolean);
    const request = { groups, expires: form.expires.value };
    if (form.email.value.trim()) request.email = form.email.value.trim();
    const created = await admin("POST", "/api/admin/invitations", request);
    const box = document.getElementById("created");
    if (created.link) {
      document.getElementById("created-link").textContent = created.link;
      box.hidden = false;
    } else {
      box.hidden = true;
    }
    form.reset();
    await load();
    say(created.mailed ? t("console.invitations.mailed") : t("console.invitations.created"), "success");
  });
});

body.addEventListener("click", (event) => {
  const button = event.target.closest("button[data-id]");
  if (!button) return;
  run(async () => {
    await admin("DELETE", `/api/admin/invitations/${encodeURIComponent(button.dataset.id)}`);
    await load();
  }, t("console.invitations.revoked-done"));
});

run(load);

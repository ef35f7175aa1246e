// Admin API tokens: list, create (name, scopes, lifetime; the token shown once with a copy button), revoke after a
// confirmation. Through /api/admin/tokens, the rules `sesame admin-tokens` follows; the server refuses a token that
// asks to make one, so only a person at the console makes tokens here.

import { admin, el, say, formatDate, t, tn } from "/console/static/console.js";

const body = document.getElementById("tokens");
const form = document.getElementById("create");
const scopesBox = document.getElementById("scopes");
const created = document.getElementById("created");
const createdToken = document.getElementById("created-token");
const revokeBox = document.getElementById("revoke-box");
let pending = null;

// Lifetimes offered, in days (the server takes 1 to 365); 90 is the command line's default.
const lifetimes = [7, 30, 90, 365];
const lifetime = document.getElementById("lifetime");
lifetime.replaceChildren(
  ...lifetimes.map((days) => el("option", { value: String(days), selected: days === 90 }, tn("console.tokens.days", days))),
);

function stateText(token) {
  switch (token.state) {
    case "active": return t("console.tokens.active");
    case "expired": return t("console.tokens.expired");
    case "revoked": return t("console.tokens.revoked-on", { date: formatDate(token.revokedAt) });
    default: return token.state;
  }
}

function fillScopes(scopes) {
  if (scopesBox.querySelector("input")) return;
  for (const scope of scopes) {
    scopesBox.append(
      el(
        "label",
        { class: "check" },
        el("input", { type: "checkbox", name: "scope", value: scope, id: `scope-${scope}` }),
        " ",
        el("code", { text: scope }),
      ),
    );
  }
}

async function load() {
  const { tokens, scopes } = await admin("GET", "/api/admin/tokens");
  fillScopes(scopes);
  body.replaceChildren(
    ...tokens.map((token) =>
      el(
        "tr",
        { dataset: { id: token.id, state: token.state } },
        el("td", { text: token.name }),
        el("td", {}, el("code", { text: token.id })),
        el("td", {}, el("code", { text: token.scopes.join(t("console.common.list-separator")) })),
        el("td", { text: formatDate(token.createdAt) }),
        el("td", { text: formatDate(token.expiresAt) }),
        el("td", { text: formatDate(token.lastUsedAt) }),
        el("td", { text: stateText(token) }),
        el(
          "td",
          {},
          token.state === "active"
            ? el(
                "button",
                {
                  type: "button",
                  class: "danger",
                  "aria-label": t("console.tokens.revoke-label", { name: token.name }),
                  dataset: { id: token.id, name: token.name },
                },
                t("console.tokens.revoke"),
              )
            : null,
        ),
      ),
    ),
  );
  if (tokens.length === 0) body.append(el("tr", {}, el("td", { colspan: "8", class: "muted", text: t("console.tokens.none") })));
}

async function run(action) {
  try {
    await action();
  } catch (error) {
    say(error.message, "error");
  }
}

form.addEventListener("submit", (event) => {
  event.preventDefault();
  run(async () => {
    const scopes = [...scopesBox.querySelectorAll("input[name=scope]:checked")].map((box) => box.value);
    const name = form.elements.name.value.trim();
    const answer = await admin("POST", "/api/admin/tokens", {
      name,
      scopes,
      expiresInDays: Number(lifetime.value),
    });
    createdToken.textContent = answer.token;
    created.hidden = false;
    form.reset();
    lifetime.value = "90";
    await load();
    say(t("console.tokens.created", { name: answer.adminToken.name }), "success");
    document.getElementById("created-heading").focus();
  });
});

document.getElementById("copy").addEventListener("click", () => {
  const token = createdToken.textContent;
  const copied = navigator.clipboard ? navigator.clipboard.writeText(token) : Promise.reject(new Error("no clipboard"));
  copied.then(
    () => say(t("console.tokens.copied"), "success"),
    () => {
      // The browser would not copy: select the token so the person can.
      const range = document.createRange();
      range.selectNodeContents(createdToken);
      const selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      say(t("console.tokens.copy-failed"), "error");
    },
  );
});

body.addEventListener("click", (event) => {
  const button = event.target.closest("button[data-id]");
  if (!button) return;
  pending = { id: button.dataset.id, name: button.dataset.name };
  document.getElementById("revoke-question").textContent = t("console.tokens.revoke-question", pending);
  revokeBox.hidden = false;
  document.getElementById("revoke-confirm").focus();
});

document.getElementById("revoke-cancel").addEventListener("click", () => {
  const id = pending && pending.id;
  pending = null;
  revokeBox.hidden = true;
  const button = id && body.querySelector(`button[data-id="${CSS.escape(id)}"]`);
  if (button) button.focus();
});

document.getElementById("revoke-confirm").addEventListener("click", () => {
  if (!pending) return;
  const { id, name } = pending;
  run(async () => {
    await admin("DELETE", `/api/admin/tokens/${encodeURIComponent(id)}`);
    pending = null;
    revokeBox.hidden = true;
    await load();
    say(t("console.tokens.revoked-done", { name }), "success");
    document.getElementById("list-heading").focus();
  });
});

run(load);

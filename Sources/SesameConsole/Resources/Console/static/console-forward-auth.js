// Forward-auth rules: the rules in force, and a test of a URL (and a person) against them.

import { admin, el, say } from "/console/static/console.js";

async function load() {
  const { domains, passkeyDomains, rules } = await admin("GET", "/api/admin/forward-auth/rules");
  document.getElementById("domains").textContent = domains.length ? domains.join(", ") : "none (forward auth is off)";
  document.getElementById("passkey-domains").textContent = passkeyDomains.length ? passkeyDomains.join(", ") : "none";
  const body = document.getElementById("rules");
  body.replaceChildren(
    ...rules.map((rule) =>
      el(
        "tr",
        {},
        el("td", { text: String(rule.index + 1) }),
        el("td", {}, el("code", { text: rule.host })),
        el("td", {}, el("code", { text: rule.path })),
        el("td", { text: rule.policy }),
        el("td", { text: rule.groups.length ? rule.groups.join(", ") : "—" }),
      ),
    ),
  );
  if (rules.length === 0) {
    body.append(el("tr", {}, el("td", { colspan: "5", class: "muted", text: "No rules: every signed-in person passes." })));
  }
}

const words = { pass: "Let in", "sign-in": "Sent to sign in first", denied: "Refused" };

document.getElementById("test").addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  try {
    const request = { url: form.url.value.trim() };
    if (form.user.value.trim()) request.user = form.user.value.trim();
    const answer = await admin("POST", "/api/admin/forward-auth/test", request);
    document.getElementById("result-decision").textContent = words[answer.decision] || answer.decision;
    document.getElementById("result-reason").textContent = answer.reason;
    document.getElementById("result-rule").textContent = answer.rule
      ? `Rule ${answer.rule.index + 1}: ${answer.rule.host}${answer.rule.path} (${answer.rule.policy})`
      : answer.match === "unruled"
        ? "No rule decides: there are no rules."
        : "No rule matches.";
    document.getElementById("result").hidden = false;
    say("");
  } catch (error) {
    say(error.message, "error");
  }
});

load().catch((error) => say(error.message, "error"));

// Forward-auth rules: the rules in force, and a test of a URL (and a person) against them.

import { admin, el, say, t, formatNumber } from "/console/static/console.js";

const list = (items) => items.join(t("console.common.list-separator"));

async function load() {
  const { domains, passkeyDomains, rules } = await admin("GET", "/api/admin/forward-auth/rules");
  document.getElementById("domains").textContent = domains.length ? list(domains) : t("console.forward-auth.no-domains");
  document.getElementById("passkey-domains").textContent = passkeyDomains.length ? list(passkeyDomains) : t("console.forward-auth.none");
  const body = document.getElementById("rules");
  body.replaceChildren(
    ...rules.map((rule) =>
      el(
        "tr",
        {},
        el("td", { text: formatNumber(rule.index + 1) }),
        el("td", {}, el("code", { text: rule.host })),
        el("td", {}, el("code", { text: rule.path })),
        el("td", {}, el("code", { text: rule.policy })),
        el("td", { text: rule.groups.length ? list(rule.groups) : t("console.common.none-dash") }),
      ),
    ),
  );
  if (rules.length === 0) {
    body.append(el("tr", {}, el("td", { colspan: "5", class: "muted", text: t("console.forward-auth.no-rules") })));
  }
}

function decision(name) {
  switch (name) {
    case "pass": return t("console.forward-auth.pass");
    case "sign-in": return t("console.forward-auth.sign-in");
    case "denied": return t("console.forward-auth.denied");
    default: return name;
  }
}

document.getElementById("test").addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  try {
    const request = { url: form.url.value.trim() };
    if (form.user.value.trim()) request.user = form.user.value.trim();
    const answer = await admin("POST", "/api/admin/forward-auth/test", request);
    document.getElementById("result-decision").textContent = decision(answer.decision);
    document.getElementById("result-reason").textContent = answer.reason;
    document.getElementById("result-rule").textContent = answer.rule
      ? t("console.forward-auth.rule", {
        number: formatNumber(answer.rule.index + 1),
        rule: `${answer.rule.host}${answer.rule.path}`,
        policy: answer.rule.policy,
      })
      : answer.match === "unruled"
        ? t("console.forward-auth.unruled")
        : t("console.forward-auth.no-match");
    document.getElementById("result").hidden = false;
    say("");
  } catch (error) {
    say(error.message, "error");
  }
});

load().catch((error) => say(error.message, "error"));

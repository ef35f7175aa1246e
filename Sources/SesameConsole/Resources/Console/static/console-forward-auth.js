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

// Why the test came to its decision, in the page's language: the answer's `reasonCode` with its parameters (the
// English `reason` only for a code newer than this page).
function reasonText(answer) {
  const parameters = answer.reasonParameters || {};
  const user = parameters.user || t("console.forward-auth.this-person");
  const passkey = answer.passkeyRequired;
  switch (answer.reasonCode) {
    case "https-only": return t("console.forward-auth.why-https-only");
    case "host-not-allowed": return t("console.forward-auth.why-host-not-allowed", { host: parameters.host || "" });
    case "no-rule-matches": return t("console.forward-auth.why-no-rule-matches");
    case "nobody": return t("console.forward-auth.why-nobody", { number: formatNumber(parameters.rule || 0) });
    case "not-in-groups":
      return t("console.forward-auth.why-not-in-groups", { user, groups: list(parameters.groups || []) });
    case "sign-in":
      return passkey ? t("console.forward-auth.why-sign-in-passkey") : t("console.forward-auth.why-sign-in");
    case "in-groups":
      return passkey
        ? t("console.forward-auth.why-in-groups-passkey", { user })
        : t("console.forward-auth.why-in-groups", { user });
    case "unruled":
      return passkey ? t("console.forward-auth.why-unruled-passkey") : t("console.forward-auth.why-unruled");
    case "passes":
      return passkey ? t("console.forward-auth.why-passes-passkey", { user }) : t("console.forward-auth.why-passes", { user });
    case "refused": return t("console.forward-auth.why-refused");
    default: return answer.reason;
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
    document.getElementById("result-reason").textContent = reasonText(answer);
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

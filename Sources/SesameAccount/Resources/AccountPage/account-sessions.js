// Account page, the sessions card (SesameAccount): where the account is signed in, signing one or all out.

import { call } from "./api.js";
import { $, say, busy, focus, el } from "./ui.js";
import { t } from "./i18n.js";
import { section, formatDate, failed } from "./account.js";

/** This card's endpoints (its feature's routes), through api.js's `call`. */
const endpoints = {
  sessions: () => call("GET", "/api/account/sessions"),
  revokeSession: (id) => call("DELETE", `/api/account/sessions/${encodeURIComponent(id)}`),
  revokeAllSessions: () => call("DELETE", "/api/account/sessions"),
};

function describeAgent(agent) {
  if (!agent) return t("web.account.sessions.unknown-device");
  const browser = /Edg\//.test(agent) ? "Edge" : /Firefox\//.test(agent) ? "Firefox" : /Chrom(e|ium)\//.test(agent) ? "Chrome" : /Safari\//.test(agent) ? "Safari" : null;
  const system = /Android/.test(agent) ? "Android" : /iPhone|iPad/.test(agent) ? "iOS" : /Mac OS X/.test(agent) ? "macOS" : /Windows/.test(agent) ? "Windows" : /Linux/.test(agent) ? "Linux" : null;
  if (browser && system) return t("web.account.sessions.agent", { browser, system });
  return browser || system || t("web.account.sessions.other-device");
}

/**
 * How a session was established, in words: the catalog's `web.account.sessions.method.<method>`, with the `+` of
 * `password+<factor>` written `-` (`CatalogCoverageTests` holds the catalog to every method the server's features can
 * record, `SessionMethod.all`, so a new factor brings its words and no change here). A method without words shows as
 * itself.
 */
function methodWords(method) {
  const key = `web.account.sessions.method.${String(method).replace("+", "-")}`;
  const words = t(key);
  return words === key ? method : words;
}

async function loadSessions() {
  const sessions = await endpoints.sessions();
  const list = $("session-list");
  list.replaceChildren();
  for (const session of Array.isArray(sessions) ? sessions : []) {
    const item = el("li", { class: "session", dataset: { id: session.id } },
      el("div", { class: "details" },
        el("p", { class: "title" }, describeAgent(session.userAgent), session.current ? el("span", { class: "badge", text: t("web.account.sessions.this-device") }) : null),
        el("p", { class: "dates", text: t("web.account.sessions.dates", { signedIn: formatDate(session.createdAt), method: methodWords(session.method), seen: formatDate(session.lastSeenAt) }) })));
    const button = el("button", { type: "button", class: "secondary", text: session.current ? t("web.account.sign-out") : t("web.account.sessions.sign-out-one") });
    button.addEventListener("click", () => busy(button, async () => {
      try {
        await endpoints.revokeSession(session.id);
        if (session.current) return location.assign("/signin");
        await loadSessions();
        say(t("web.account.sessions.signed-out"), "success");
        focus($("sessions-heading"));
      } catch (error) {
        failed(error);
      }
    }));
    item.append(el("div", { class: "actions" }, button));
    list.append(item);
  }
}

function wire() {
  $("sign-out-all").addEventListener("click", () => busy($("sign-out-all"), async () => {
    try {
      await endpoints.revokeAllSessions();
      location.assign("/signin");
    } catch (error) {
      failed(error);
    }
  }));
}

section({ name: "sessions", anchor: "sessions", wire, load: loadSessions });

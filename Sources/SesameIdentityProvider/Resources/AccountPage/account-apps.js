// Account page, the apps card (SesameIdentityProvider): the apps with access to the account, what each sees, and
// taking access back. What it reads is announced (`sesame:apps`) for the groups card's list of available apps.

import { call } from "./api.js";
import { $, say, busy, focus, show, el } from "./ui.js";
import { t } from "./i18n.js";
import { section, formatDate, failed } from "./account.js";

/** This card's endpoints (its feature's routes), through api.js's `call`. */
const endpoints = {
  apps: () => call("GET", "/api/account/apps"),
  revokeApp: (clientId) => call("DELETE", `/api/account/apps/${encodeURIComponent(clientId)}`),
};

/** What an app's scopes let it do, in words (scopes of the identity provider). */
function describeScopes(scopes) {
  const profile = scopes.includes("profile");
  const groups = scopes.includes("groups");
  const sees = profile && groups ? t("web.account.apps.sees-profile-groups")
    : profile ? t("web.account.apps.sees-profile")
    : groups ? t("web.account.apps.sees-groups")
    : t("web.account.apps.sees-identity");
  return scopes.includes("offline_access") ? `${sees} · ${t("web.account.apps.offline")}` : sees;
}

async function loadApps() {
  const body = await endpoints.apps();
  const apps = Array.isArray(body && body.apps) ? body.apps : [];
  document.dispatchEvent(new CustomEvent("sesame:apps", { detail: body }));
  const list = $("app-list");
  list.replaceChildren();
  show($("apps-empty"), apps.length === 0);
  for (const app of apps) {
    const item = el("li", { class: "app", dataset: { clientId: app.clientId } },
      el("div", { class: "details" },
        el("p", { class: "title", text: app.name }),
        el("p", { class: "dates", text: t("web.account.apps.since", { date: formatDate(app.since), scopes: describeScopes(app.scopes) }) })));
    const button = el("button", { type: "button", class: "secondary", text: t("web.account.apps.remove"),
      "aria-label": t("web.account.apps.remove-label", { app: app.name }) });
    button.addEventListener("click", () => busy(button, async () => {
      try {
        await endpoints.revokeApp(app.clientId);
        await loadApps();
        say(t("web.account.apps.removed", { app: app.name }), "success");
        focus($("apps-heading"));
      } catch (error) {
        failed(error);
      }
    }));
    item.append(el("div", { class: "actions" }, button));
    list.append(item);
  }
}

section({ name: "apps", anchor: "apps", load: loadApps });

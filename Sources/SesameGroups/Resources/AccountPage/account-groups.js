// Account page, the groups card (SesameGroups): the groups the person is in and the apps open to them (read-only).
// The apps come from the apps card's endpoint, which announces them (`sesame:apps`) when it loads.

import { $, el } from "./ui.js";
import { t, tn, locale } from "./i18n.js";
import { section } from "./account.js";

function render(account) {
  const groups = Array.isArray(account.groups) ? account.groups : [];
  $("group-summary").textContent = groups.length === 0
    ? t("web.account.groups.none")
    : tn("web.account.groups.member", groups.length, { groups: new Intl.ListFormat(locale).format(groups) });
}

/** The apps the person may use: open to anyone, or allowing one of their groups. */
function renderAvailableApps(apps) {
  $("available-app-list").replaceChildren(...apps.map((app) =>
    el("li", { class: "app", dataset: { clientId: app.clientId } },
      el("div", { class: "details" }, el("p", { class: "title", text: app.name })))));
}

document.addEventListener("sesame:apps", (event) => {
  const body = event.detail;
  renderAvailableApps(Array.isArray(body && body.available) ? body.available : []);
});

section({ name: "groups", render });

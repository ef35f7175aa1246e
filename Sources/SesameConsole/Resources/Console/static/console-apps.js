// Apps (OpenID Connect clients): list, create, edit, rotate the secret (shown once), delete with typed confirmation.

import { admin, el, say, t } from "/console/static/console.js";

const appsBody = document.getElementById("apps");

// The kinds of client: a public one has no secret; a confidential one a secret; one with keys signs its requests.
function typeName(type) {
  switch (type) {
    case "public": return t("console.apps.type-public");
    case "confidential": return t("console.apps.type-confidential");
    case "private_key_jwt": return t("console.apps.type-keys");
    default: return type;
  }
}
const detail = document.getElementById("detail");
let current = null;

/** The fields of an app's form; `prefix` keeps the two forms' ids apart. */
function fields(form, prefix, isNew) {
  const id = (name) => `${prefix}-${name}`;
  const field = (name, label, input) => [el("label", { for: id(name), text: label }), input];
  const children = [
    ...field("name", t("console.common.name"), el("input", { type: "text", id: id("name"), name: "name", maxlength: "64", required: true })),
    ...field(
      "redirects",
      t("console.apps.redirects"),
      el("textarea", { id: id("redirects"), name: "redirects", spellcheck: "false", required: true, dir: "ltr" }),
    ),
    ...field(
      "logout",
      t("console.apps.logout-redirects"),
      el("textarea", { id: id("logout"), name: "logout", spellcheck: "false", dir: "ltr" }),
    ),
    ...field(
      "backchannel",
      t("console.apps.backchannel"),
      el("input", { type: "url", id: id("backchannel"), name: "backchannel", dir: "ltr" }),
    ),
    ...field(
      "groups",
      t("console.apps.groups-label"),
      el("input", { type: "text", id: id("groups"), name: "groups", autocomplete: "off", dir: "ltr" }),
    ),
    el(
      "label",
      { class: "check" },
      el("input", { type: "checkbox", id: id("claims"), name: id("claims") }),
      " ",
      t("console.apps.id-token-claims"),
    ),
    isNew
      ? el(
          "label",
          { class: "check" },
          el("input", { type: "checkbox", id: id("public"), name: "public" }),
          " ",
          t("console.apps.public"),
        )
      : null,
    el("div", { class: "actions" }, el("button", { type: "submit", class: "primary" }, isNew ? t("console.apps.create") : t("console.common.save"))),
  ];
  form.replaceChildren(...children.filter(Boolean));
}

const lines = (text) =>
  text
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean);

function read(form) {
  const groups = form.groups.value
    .split(",")
    .map((slug) => slug.trim())
    .filter(Boolean);
  return {
    name: form.elements.name.value.trim(),
    redirectUris: lines(form.redirects.value),
    postLogoutRedirectUris: lines(form.logout.value),
    backchannelLogoutUri: form.backchannel.value.trim() || null,
    allowedGroups: groups.length ? groups : null,
    idTokenClaims: form.querySelector("input[type=checkbox][id$=\"-claims\"]").checked,
  };
}

function showSecret(app, secret) {
  const box = document.getElementById("secret-box");
  document.getElementById("secret-id").textContent = app.id;
  document.getElementById("secret-value").textContent = secret;
  box.hidden = false;
  box.scrollIntoView({ block: "nearest" });
}

async function load() {
  const { apps } = await admin("GET", "/api/admin/apps");
  appsBody.replaceChildren(
    ...apps.map((app) =>
      el(
        "tr",
        {},
        el("td", { text: app.name }),
        el("td", {}, el("code", { text: app.id })),
        el("td", { text: typeName(app.type) }),
        el("td", { text: app.allowedGroups ? app.allowedGroups.join(t("console.common.list-separator")) : t("console.apps.anyone") }),
        el("td", {}, el("button", { type: "button", "aria-label": t("console.common.open-label", { name: app.name }), dataset: { id: app.id } }, t("console.common.open"))),
      ),
    ),
  );
  if (apps.length === 0) appsBody.append(el("tr", {}, el("td", { colspan: "5", class: "muted", text: t("console.apps.none") })));
}

async function open(id) {
  const app = await admin("GET", `/api/admin/apps/${encodeURIComponent(id)}`);
  current = app;
  detail.hidden = false;
  document.getElementById("detail-heading").textContent = app.name;
  document.getElementById("detail-id").textContent = app.id;
  const form = document.getElementById("edit");
  form.elements.name.value = app.name;
  form.redirects.value = app.redirectUris.join("\n");
  form.logout.value = app.postLogoutRedirectUris.join("\n");
  form.backchannel.value = app.backchannelLogoutUri || "";
  form.groups.value = app.allowedGroups ? app.allowedGroups.join(", ") : "";
  document.getElementById("edit-claims").checked = app.idTokenClaims;
  document.getElementById("rotate").hidden = app.type !== "confidential";
  document.getElementById("delete-name").textContent = app.name;
  document.getElementById("delete-confirm").value = "";
  document.getElementById("delete-button").disabled = true;
}

async function run(action, done) {
  try {
    await action();
    if (done) say(done, "success");
  } catch (error) {
    say(error.message, "error");
  }
}

fields(document.getElementById("create"), "new", true);
fields(document.getElementById("edit"), "edit", false);

appsBody.addEventListener("click", (event) => {
  const button = event.target.closest("button[data-id]");
  if (button) run(() => open(button.dataset.id).then(() => document.getElementById("edit-name").focus()));
});

document.getElementById("create").addEventListener("submit", (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  run(async () => {
    const request = read(form);
    if (request.backchannelLogoutUri === null) delete request.backchannelLogoutUri;
    if (request.allowedGroups === null) delete request.allowedGroups;
    request.public = form.public.checked;
    const { app, secret } = await admin("POST", "/api/admin/apps", request);
    form.reset();
    if (secret) showSecret(app, secret);
    await load();
    await open(app.id);
  }, t("console.apps.created"));
});

document.getElementById("edit").addEventListener("submit", (event) => {
  event.preventDefault();
  run(async () => {
    await admin("PATCH", `/api/admin/apps/${encodeURIComponent(current.id)}`, read(event.currentTarget));
    await load();
    await open(current.id);
  }, t("console.common.saved"));
});

document.getElementById("rotate").addEventListener("click", () => {
  run(async () => {
    const { app, secret } = await admin("POST", `/api/admin/apps/${encodeURIComponent(current.id)}/secret`);
    showSecret(app, secret);
  }, t("console.apps.rotated"));
});

document.getElementById("delete-confirm").addEventListener("input", (event) => {
  document.getElementById("delete-button").disabled = !current || event.target.value !== current.name;
});

document.getElementById("delete").addEventListener("submit", (event) => {
  event.preventDefault();
  if (!current || document.getElementById("delete-confirm").value !== current.name) return;
  const { id, name } = current;
  run(async () => {
    await admin("DELETE", `/api/admin/apps/${encodeURIComponent(id)}`);
    current = null;
    detail.hidden = true;
    document.getElementById("secret-box").hidden = true;
    await load();
  }, t("console.apps.deleted", { name }));
});

// `/console/apps?app=<client id>` (the audit log's link to an app) opens that app.
const asked = new URLSearchParams(location.search).get("app");
run(async () => {
  await load();
  if (!asked) return;
  await open(asked);
  detail.scrollIntoView({ block: "start" });
  document.getElementById("detail-heading").focus();
});

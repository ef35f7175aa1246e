// Groups: list, create (slug, name, claims), edit name and claims, delete with typed confirmation, members.

import { admin, el, say, t, formatNumber } from "/console/static/console.js";

const groupsBody = document.getElementById("groups");
// An example of custom claims in the new group's field: JSON, the same in every language.
document.getElementById("claims").placeholder = JSON.stringify({ roles: ["viewer"] });
const detail = document.getElementById("detail");
let current = null;

function parseClaims(text) {
  const trimmed = text.trim();
  if (trimmed === "") return undefined;
  try {
    return JSON.parse(trimmed);
  } catch {
    throw new Error(t("console.groups.claims-invalid", { example: JSON.stringify({ roles: ["viewer"] }) }));
  }
}

async function load() {
  const { groups } = await admin("GET", "/api/admin/groups");
  groupsBody.replaceChildren(
    ...groups.map((group) =>
      el(
        "tr",
        {},
        el("td", {}, el("code", { text: group.slug })),
        el("td", { text: group.name }),
        el("td", { text: formatNumber(group.memberCount) }),
        el(
          "td",
          {},
          el("button", { type: "button", "aria-label": t("console.common.open-label", { name: group.slug }), dataset: { slug: group.slug } }, t("console.common.open")),
        ),
      ),
    ),
  );
  if (groups.length === 0) groupsBody.append(el("tr", {}, el("td", { colspan: "4", class: "muted", text: t("console.groups.none") })));
}

async function open(slug) {
  const { group, members } = await admin("GET", `/api/admin/groups/${encodeURIComponent(slug)}`);
  current = group;
  detail.hidden = false;
  document.getElementById("detail-heading").textContent = t("console.groups.group-heading", { group: group.slug });
  document.getElementById("edit-name").value = group.name;
  document.getElementById("edit-claims").value = JSON.stringify(group.claims, null, 2);
  document.getElementById("delete-slug").textContent = group.slug;
  document.getElementById("delete-confirm").value = "";
  document.getElementById("delete-button").disabled = true;
  const list = document.getElementById("members");
  list.replaceChildren(
    ...members.map((member) =>
      el(
        "li",
        {},
        el("span", { text: member.username }),
        " ",
        el(
          "button",
          { type: "button", class: "danger", "aria-label": t("console.groups.remove-member-label", { username: member.username }), dataset: { username: member.username } },
          t("console.common.remove"),
        ),
      ),
    ),
  );
  if (members.length === 0) list.append(el("li", { class: "muted", text: t("console.groups.no-members") }));
}

async function run(action, done) {
  try {
    await action();
    if (done) say(done, "success");
  } catch (error) {
    say(error.message, "error");
  }
}

groupsBody.addEventListener("click", (event) => {
  const button = event.target.closest("button[data-slug]");
  if (button) run(() => open(button.dataset.slug).then(() => document.getElementById("edit-name").focus()));
});

document.getElementById("create").addEventListener("submit", (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  run(async () => {
    const slug = form.slug.value.trim();
    const body = { slug, claims: parseClaims(form.claims.value) };
    if (form.elements.name.value.trim()) body.name = form.elements.name.value.trim();
    await admin("POST", "/api/admin/groups", body);
    form.reset();
    await load();
    await open(slug);
  }, t("console.groups.created"));
});

document.getElementById("edit").addEventListener("submit", (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  run(async () => {
    const claims = parseClaims(form.claims.value);
    await admin("PATCH", `/api/admin/groups/${encodeURIComponent(current.slug)}`, {
      name: form.elements.name.value.trim(),
      claims: claims === undefined ? {} : claims,
    });
    await load();
    await open(current.slug);
  }, t("console.common.saved"));
});

document.getElementById("add-member").addEventListener("submit", (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  const username = form.member.value.trim();
  run(async () => {
    await admin(
      "PUT",
      `/api/admin/groups/${encodeURIComponent(current.slug)}/members/${encodeURIComponent(username)}`,
    );
    form.reset();
    await load();
    await open(current.slug);
  }, t("console.groups.member-added", { username }));
});

document.getElementById("members").addEventListener("click", (event) => {
  const button = event.target.closest("button[data-username]");
  if (!button) return;
  const username = button.dataset.username;
  run(async () => {
    await admin(
      "DELETE",
      `/api/admin/groups/${encodeURIComponent(current.slug)}/members/${encodeURIComponent(username)}`,
    );
    await load();
    await open(current.slug);
  }, t("console.groups.member-removed", { username }));
});

document.getElementById("delete-confirm").addEventListener("input", (event) => {
  document.getElementById("delete-button").disabled = !current || event.target.value !== current.slug;
});

document.getElementById("delete").addEventListener("submit", (event) => {
  event.preventDefault();
  if (!current || document.getElementById("delete-confirm").value !== current.slug) return;
  const slug = current.slug;
  run(async () => {
    await admin("DELETE", `/api/admin/groups/${encodeURIComponent(slug)}`);
    current = null;
    detail.hidden = true;
    await load();
  }, t("console.groups.deleted", { group: slug }));
});

run(load);

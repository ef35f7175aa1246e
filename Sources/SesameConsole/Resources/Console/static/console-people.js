// The console's People pages: the search with its pages (`/console/people`), and one person
// (`/console/people/<id>`): their passkeys, second factors, groups, sessions, apps and recent events, and the
// operators' changes, each said in the status line with the focus put back where the work goes on.

import { admin, AdminFailure, el, say, formatDate } from "./console.js";

const section = document.querySelector("section.people");
const item = section ? section.dataset.item : "";
const pageSize = 25;

function failure(error) {
  if (error instanceof AdminFailure) return error.message;
  return "Something went wrong. Please try again.";
}

function table(label, headings, rows) {
  if (rows.length === 0) return el("p", { class: "muted", text: "None." });
  return el(
    "table",
    { "aria-label": label },
    el("thead", {}, el("tr", {}, ...headings.map((heading) => el("th", { scope: "col", text: heading })))),
    el("tbody", {}, ...rows),
  );
}

// The list: a search and pages after keyset cursors (`next`); the cursors of the pages seen are kept to go back.
function startList(notice = "", focusAfter = null) {
  const form = document.getElementById("search");
  const input = document.getElementById("q");
  const body = document.querySelector("#people tbody");
  const previous = document.getElementById("previous");
  const next = document.getElementById("next");
  const number = document.getElementById("page-number");
  let cursors = [""];
  let nextCursor = null;
  let query = new URLSearchParams(location.search).get("q") || "";
  input.value = query;

  async function load(focus) {
    const index = cursors.length - 1;
    // Spaces as %20: the server reads `+` as itself.
    let parameters = `q=${encodeURIComponent(query)}&limit=${pageSize}`;
    if (cursors[index]) parameters += `&after=${encodeURIComponent(cursors[index])}`;
    say("Searching…");
    try {
      const page = await admin("GET", `/api/admin/people?${parameters}`);
      body.replaceChildren(
        ...page.people.map((person) =>
          el(
            "tr",
            {},
            el("td", {}, el("a", { href: `/console/people/${encodeURIComponent(person.id)}`, text: person.username })),
            el("td", { text: person.displayName }),
            el("td", { text: person.email || "—" }),
            el("td", { text: person.disabled ? "Disabled" : "Enabled" }),
            el("td", { text: formatDate(person.createdAt) }),
          ),
        ),
      );
      nextCursor = page.next || null;
      next.disabled = !nextCursor;
      previous.disabled = index === 0;
      number.textContent = `Page ${index + 1}`;
      const found = page.people.length;
      const said = notice ? `${notice} ` : "";
      notice = "";
      say(
        said + (found === 0
          ? query ? `Nobody matches “${query}”.` : "No accounts yet."
          : `Page ${index + 1}: ${found} ${found === 1 ? "person" : "people"}${query ? ` matching “${query}”` : ""}.`),
        "success",
      );
      if (focus) focus.focus();
    } catch (error) {
      say(failure(error), "error");
    }
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    query = input.value.trim();
    cursors = [""];
    const url = new URL(location.href);
    if (query) url.searchParams.set("q", query);
    else url.searchParams.delete("q");
    history.replaceState(null, "", url);
    load();
  });
  next.addEventListener("click", () => {
    if (!nextCursor) return;
    cursors.push(nextCursor);
    load(next.disabled ? previous : null);
  });
  previous.addEventListener("click", () => {
    if (cursors.length < 2) return;
    cursors.pop();
    load(previous.disabled ? next : null);
  });
  return load(focusAfter);
}

// One person.
function startPerson(id) {
  document.getElementById("list-view").hidden = true;
  document.getElementById("person-view").hidden = false;
  const path = `/api/admin/people/${encodeURIComponent(id)}`;
  let person = null;

  // Runs an action; on success reloads the person, says `done`, and puts the focus on `focusID`.
  async function act(button, waiting, action, done, focusID) {
    if (button) button.disabled = true;
    say(waiting);
    try {
      await action();
      await load();
      say(done, "success");
      const target = document.getElementById(focusID);
      if (target) target.focus();
    } catch (error) {
      say(failure(error), "error");
      if (button) {
        button.disabled = false;
        button.focus();
      }
    }
  }

  function renderSummary(data) {
    const p = data.person;
    document.getElementById("person-title").textContent = p.displayName && p.displayName !== p.username
      ? `${p.displayName} (${p.username})`
      : p.username;
    document.title = `${p.username} · ${document.title.split(" · ").slice(1).join(" · ")}`;
    const facts = [
      ["Username", p.username],
      ["Display name", p.displayName],
      ["Email", p.email ? `${p.email} (verified)${data.pendingEmail ? `; ${data.pendingEmail} pending` : ""}` : data.pendingEmail ? `${data.pendingEmail} (pending)` : "None"],
      ["State", p.disabled ? "Disabled" : "Enabled"],
      ["Created", formatDate(p.createdAt)],
      ["Password", data.password ? "Set" : "None"],
      ["Administrator", data.administrator ? "Yes" : "No"],
      ["Id", p.id],
    ];
    document.getElementById("summary").replaceChildren(
      ...facts.flatMap(([term, value]) => [el("dt", { text: term }), el("dd", { text: value })]),
    );
    const toggle = el("button", { type: "button", id: "toggle-disabled", class: p.disabled ? "primary" : "danger" },
      p.disabled ? "Enable account" : "Disable account");
    toggle.addEventListener("click", () =>
      p.disabled
        ? act(toggle, "Enabling…", () => admin("POST", `${path}/enable`), `${p.username} is enabled again.`, "toggle-disabled")
        : act(toggle, "Disabling…", () => admin("POST", `${path}/disable`),
          `${p.username} is disabled and signed out everywhere.`, "toggle-disabled"));
    const signOut = el("button", { type: "button", id: "sign-out" }, "Sign out everywhere");
    signOut.addEventListener("click", () =>
      act(signOut, "Signing out…", async () => {
        const result = await admin("POST", `${path}/sign-out`);
        signOut.dataset.ended = String(result.sessionsEnded);
      }, `${p.username} is signed out everywhere.`, "sessions-title"));
    document.getElementById("account-actions").replaceChildren(toggle, signOut);
    document.getElementById("confirm-hint").textContent = p.username;
  }

  function renderPasskeys(data) {
    const rows = data.passkeys.map((passkey, index) => {
      const remove = el("button", { type: "button", class: "danger", id: `remove-passkey-${index}`,
        "aria-label": `Remove passkey ${passkey.name}` }, "Remove");
      remove.addEventListener("click", () =>
        act(remove, "Removing the passkey…",
          () => admin("DELETE", `${path}/passkeys/${encodeURIComponent(passkey.id)}`),
          `Passkey “${passkey.name}” removed.`, "passkeys-title"));
      const provider = passkey.provider || "Unknown provider";
      return el("tr", {},
        el("td", {}, passkey.name),
        el("td", {}, passkey.icon ? el("img", { src: passkey.icon, alt: "", width: 20, height: 20, class: "icon" }) : null,
          ` ${provider}`),
        el("td", { text: formatDate(passkey.createdAt) }),
        el("td", { text: formatDate(passkey.lastUsedAt) }),
        el("td", { text: passkey.synced ? "Synced" : "This device only" }),
        el("td", {}, remove));
    });
    document.getElementById("passkeys").replaceChildren(
      table("Passkeys", ["Name", "Provider", "Added", "Last used", "Kept", "Action"], rows));
  }

  const factorNames = { totp: "Authenticator app (TOTP)", sms: "Text message (SMS)", recovery: "Recovery codes" };

  function renderFactors(data) {
    if (data.secondFactors.length === 0) {
      document.getElementById("factors").replaceChildren(el("p", { class: "muted", text: "None set up." }));
      return;
    }
    document.getElementById("factors").replaceChildren(el("ul", { class: "plain" }, ...data.secondFactors.map((factor) => {
      const name = factorNames[factor] || factor;
      const remove = el("button", { type: "button", class: "danger", "aria-label": `Remove ${name}` }, "Remove");
      remove.addEventListener("click", () =>
        act(remove, `Removing ${name}…`, () => admin("DELETE", `${path}/factors/${encodeURIComponent(factor)}`),
          `${name} removed.`, "factors-title"));
      return el("li", {}, `${name} `, remove);
    })));
  }

  async function renderGroups(data) {
    const list = data.groups.length === 0
      ? el("p", { class: "muted", text: "In no group." })
      : el("ul", { class: "plain" }, ...data.groups.map((slug) => {
        const remove = el("button", { type: "button", class: "danger", "aria-label": `Remove from ${slug}` }, "Remove");
        remove.addEventListener("click", () =>
          act(remove, `Removing from ${slug}…`,
            () => admin("DELETE", `/api/admin/groups/${encodeURIComponent(slug)}/members/${encodeURIComponent(data.person.id)}`),
            `${data.person.username} is no longer in ${slug}.`, "groups-title"));
        return el("li", {}, el("code", { text: slug }), " ", remove);
      }));
    document.getElementById("groups").replaceChildren(list);
    const choice = document.getElementById("group-choice");
    try {
      const all = await admin("GET", "/api/admin/groups");
      const others = all.groups.filter((group) => !data.groups.includes(group.slug));
      choice.replaceChildren(...others.map((group) => el("option", { value: group.slug, text: `${group.name} (${group.slug})` })));
      document.getElementById("add-group").hidden = others.length === 0;
    } catch {
      document.getElementById("add-group").hidden = true;
    }
  }

  function renderRest(data) {
    document.getElementById("sessions").replaceChildren(table("Sessions", ["Signed in", "Last seen", "How", "Browser"],
      data.sessions.map((s) => el("tr", {}, el("td", { text: formatDate(s.createdAt) }),
        el("td", { text: formatDate(s.lastSeenAt) }), el("td", { text: s.method }), el("td", { text: s.userAgent })))));
    document.getElementById("apps").replaceChildren(table("Apps they allowed", ["App", "Scope", "Allowed"],
      data.apps.map((a) => el("tr", {}, el("td", { text: a.name || a.clientId }), el("td", { text: a.scope }),
        el("td", { text: formatDate(a.grantedAt) })))));
    document.getElementById("events").replaceChildren(table("Recent events", ["When", "What", "Outcome", "From", "Detail"],
      data.events.map((e) => el("tr", {}, el("td", { text: formatDate(e.at) }), el("td", {}, el("code", { text: e.kind })),
        el("td", { text: e.outcome }), el("td", { text: e.clientAddress }), el("td", { text: e.detail })))));
  }

  async function load() {
    person = await admin("GET", path);
    renderSummary(person);
    renderPasskeys(person);
    renderFactors(person);
    renderRest(person);
    await renderGroups(person);
    updateDelete();
  }

  const confirmInput = document.getElementById("confirm-username");
  const deleteButton = document.getElementById("delete-button");
  function updateDelete() {
    deleteButton.disabled = !person || confirmInput.value !== person.person.username;
  }
  confirmInput.addEventListener("input", updateDelete);
  document.getElementById("delete").addEventListener("submit", async (event) => {
    event.preventDefault();
    if (!person) return;
    const username = person.person.username;
    deleteButton.disabled = true;
    say(`Deleting ${username}…`);
    try {
      await admin("DELETE", path, { confirm: confirmInput.value });
      // Back to the list, which says what happened.
      history.pushState(null, "", "/console/people");
      document.getElementById("person-view").hidden = true;
      document.getElementById("list-view").hidden = false;
      startList(`${username} is deleted.`, document.getElementById("list-title"));
    } catch (error) {
      say(failure(error), "error");
      updateDelete();
      confirmInput.focus();
    }
  });

  document.getElementById("add-group").addEventListener("submit", (event) => {
    event.preventDefault();
    const slug = document.getElementById("group-choice").value;
    if (!slug || !person) return;
    act(event.submitter, `Adding to ${slug}…`,
      () => admin("PUT", `/api/admin/groups/${encodeURIComponent(slug)}/members/${encodeURIComponent(person.person.id)}`),
      `${person.person.username} is now in ${slug}.`, "groups-title");
  });

  load().then(() => document.getElementById("person-title").focus(), (error) => say(failure(error), "error"));
}

if (section) {
  if (item) startPerson(item);
  else startList();
}

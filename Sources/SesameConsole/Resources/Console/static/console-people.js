// The console's People pages: the search with its pages (`/console/people`), and one person
// (`/console/people/<id>`): their passkeys, second factors, groups, sessions, apps and recent events, and the
// operators' changes, each said in the status line with the focus put back where the work goes on.

import { admin, AdminFailure, el, say, formatDate, t, tn, formatNumber } from "./console.js";

const section = document.querySelector("section.people");
const item = section ? section.dataset.item : "";
const pageSize = 25;

function failure(error) {
  if (error instanceof AdminFailure) return error.message;
  return t("console.common.failed");
}

function table(label, headings, rows) {
  if (rows.length === 0) return el("p", { class: "muted", text: t("console.people.none") });
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
    say(t("console.people.searching"));
    try {
      const page = await admin("GET", `/api/admin/people?${parameters}`);
      body.replaceChildren(
        ...page.people.map((person) =>
          el(
            "tr",
            {},
            el("td", {}, el("a", { href: `/console/people/${encodeURIComponent(person.id)}`, text: person.username })),
            el("td", { text: person.displayName }),
            el("td", { text: person.email || t("console.common.none-dash") }),
            el("td", { text: person.disabled ? t("console.people.disabled") : t("console.people.enabled") }),
            el("td", { text: formatDate(person.createdAt) }),
          ),
        ),
      );
      nextCursor = page.next || null;
      next.disabled = !nextCursor;
      previous.disabled = index === 0;
      number.textContent = t("console.people.page", { page: formatNumber(index + 1) });
      const found = page.people.length;
      const said = notice ? `${notice} ` : "";
      notice = "";
      say(
        said + (found === 0
          ? query ? t("console.people.nobody-matches", { query }) : t("console.people.no-accounts")
          : query
            ? tn("console.people.page-found-matching", found, { page: formatNumber(index + 1), query })
            : tn("console.people.page-found", found, { page: formatNumber(index + 1) })),
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
      ? t("console.people.person-title", { name: p.displayName, username: p.username })
      : p.username;
    document.title = `${p.username} · ${document.title.split(" · ").slice(1).join(" · ")}`;
    const facts = [
      [t("console.people.username"), p.username],
      [t("console.people.display-name"), p.displayName],
      [t("console.common.email"), p.email
        ? data.pendingEmail
          ? t("console.people.email-verified-pending", { email: p.email, pending: data.pendingEmail })
          : t("console.people.email-verified", { email: p.email })
        : data.pendingEmail ? t("console.people.email-pending", { email: data.pendingEmail }) : t("console.people.no-value")],
      [t("console.common.state"), p.disabled ? t("console.people.disabled") : t("console.people.enabled")],
      [t("console.people.created"), formatDate(p.createdAt)],
      [t("console.people.password"), data.password ? t("console.people.password-set") : t("console.people.no-value")],
      [t("console.people.administrator"), data.administrator ? t("console.people.yes") : t("console.people.no")],
      [t("console.common.id"), p.id],
    ];
    document.getElementById("summary").replaceChildren(
      ...facts.flatMap(([term, value]) => [el("dt", { text: term }), el("dd", { text: value })]),
    );
    const toggle = el("button", { type: "button", id: "toggle-disabled", class: p.disabled ? "primary" : "danger" },
      p.disabled ? t("console.people.enable") : t("console.people.disable"));
    toggle.addEventListener("click", () =>
      p.disabled
        ? act(toggle, t("console.people.enabling"), () => admin("POST", `${path}/enable`),
          t("console.people.enabled-again", { username: p.username }), "toggle-disabled")
        : act(toggle, t("console.people.disabling"), () => admin("POST", `${path}/disable`),
          t("console.people.disabled-done", { username: p.username }), "toggle-disabled"));
    const signOut = el("button", { type: "button", id: "sign-out" }, t("console.people.sign-out"));
    signOut.addEventListener("click", () =>
      act(signOut, t("console.people.signing-out"), async () => {
        const result = await admin("POST", `${path}/sign-out`);
        signOut.dataset.ended = String(result.sessionsEnded);
      }, t("console.people.signed-out", { username: p.username }), "sessions-title"));
    document.getElementById("account-actions").replaceChildren(toggle, signOut);
    document.getElementById("confirm-hint").textContent = p.username;
  }

  function renderPasskeys(data) {
    const rows = data.passkeys.map((passkey, index) => {
      const remove = el("button", { type: "button", class: "danger", id: `remove-passkey-${index}`,
        "aria-label": t("console.people.remove-passkey-label", { name: passkey.name }) }, t("console.common.remove"));
      remove.addEventListener("click", () =>
        act(remove, t("console.people.removing-passkey"),
          () => admin("DELETE", `${path}/passkeys/${encodeURIComponent(passkey.id)}`),
          t("console.people.passkey-removed", { name: passkey.name }), "passkeys-title"));
      const provider = passkey.provider || t("console.people.unknown-provider");
      return el("tr", {},
        el("td", {}, passkey.name),
        el("td", {}, passkey.icon ? el("img", { src: passkey.icon, alt: "", width: 20, height: 20, class: "icon" }) : null,
          ` ${provider}`),
        el("td", { text: formatDate(passkey.createdAt) }),
        el("td", { text: formatDate(passkey.lastUsedAt) }),
        el("td", { text: passkey.synced ? t("console.people.synced") : t("console.people.device-only") }),
        el("td", {}, remove));
    });
    document.getElementById("passkeys").replaceChildren(
      table(t("console.people.passkeys"), [t("console.common.name"), t("console.people.provider"),
        t("console.people.added"), t("console.people.last-used"), t("console.people.kept"), t("console.people.action")], rows));
  }

  // A factor's name: the catalog's `console.people.factor-<factor>` (`CatalogCoverageTests` holds the catalog to
  // every factor the server's features declare, so a new factor brings its words and no change here).
  function factorName(factor) {
    const key = `console.people.factor-${factor}`;
    const name = t(key);
    return name === key ? factor : name;
  }

  function renderFactors(data) {
    if (data.secondFactors.length === 0) {
      document.getElementById("factors").replaceChildren(el("p", { class: "muted", text: t("console.people.no-factors") }));
      return;
    }
    document.getElementById("factors").replaceChildren(el("ul", { class: "plain" }, ...data.secondFactors.map((factor) => {
      const name = factorName(factor);
      const remove = el("button", { type: "button", class: "danger", "aria-label": t("console.people.remove-factor-label", { name }) },
        t("console.common.remove"));
      remove.addEventListener("click", () =>
        act(remove, t("console.people.removing-factor", { name }),
          () => admin("DELETE", `${path}/factors/${encodeURIComponent(factor)}`),
          t("console.people.factor-removed", { name }), "factors-title"));
      return el("li", {}, `${name} `, remove);
    })));
  }

  async function renderGroups(data) {
    const list = data.groups.length === 0
      ? el("p", { class: "muted", text: t("console.people.no-groups") })
      : el("ul", { class: "plain" }, ...data.groups.map((slug) => {
        const remove = el("button", { type: "button", class: "danger", "aria-label": t("console.people.remove-group-label", { group: slug }) },
          t("console.common.remove"));
        remove.addEventListener("click", () =>
          act(remove, t("console.people.removing-from-group", { group: slug }),
            () => admin("DELETE", `/api/admin/groups/${encodeURIComponent(slug)}/members/${encodeURIComponent(data.person.id)}`),
            t("console.people.removed-from-group", { username: data.person.username, group: slug }), "groups-title"));
        return el("li", {}, el("code", { text: slug }), " ", remove);
      }));
    document.getElementById("groups").replaceChildren(list);
    const choice = document.getElementById("group-choice");
    try {
      const all = await admin("GET", "/api/admin/groups");
      const others = all.groups.filter((group) => !data.groups.includes(group.slug));
      choice.replaceChildren(...others.map((group) => el("option", { value: group.slug, text: t("console.people.group-option", { name: group.name, group: group.slug }) })));
      document.getElementById("add-group").hidden = others.length === 0;
    } catch {
      document.getElementById("add-group").hidden = true;
    }
  }

  function renderRest(data) {
    document.getElementById("sessions").replaceChildren(table(t("console.people.sessions"), [t("console.people.signed-in"), t("console.overview.last-seen"),
      t("console.people.how"), t("console.people.browser")],
      data.sessions.map((s) => el("tr", {}, el("td", { text: formatDate(s.createdAt) }),
        el("td", { text: formatDate(s.lastSeenAt) }), el("td", { text: s.method }), el("td", { text: s.userAgent })))));
    document.getElementById("apps").replaceChildren(table(t("console.people.apps"), [t("console.people.app"), t("console.people.scope"), t("console.people.allowed")],
      data.apps.map((a) => el("tr", {}, el("td", { text: a.name || a.clientId }), el("td", { text: a.scope }),
        el("td", { text: formatDate(a.grantedAt) })))));
    document.getElementById("events").replaceChildren(table(t("console.people.events"), [t("console.common.when"), t("console.people.what"), t("console.common.outcome"),
      t("console.people.from"), t("console.common.detail")],
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
    say(t("console.people.deleting", { username }));
    try {
      await admin("DELETE", path, { confirm: confirmInput.value });
      // Back to the list, which says what happened.
      history.pushState(null, "", "/console/people");
      document.getElementById("person-view").hidden = true;
      document.getElementById("list-view").hidden = false;
      startList(t("console.people.deleted", { username }), document.getElementById("list-title"));
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
    act(event.submitter, t("console.people.adding-to-group", { group: slug }),
      () => admin("PUT", `/api/admin/groups/${encodeURIComponent(slug)}/members/${encodeURIComponent(person.person.id)}`),
      t("console.people.added-to-group", { username: person.person.username, group: slug }), "groups-title");
  });

  load().then(() => document.getElementById("person-title").focus(), (error) => say(failure(error), "error"));
}

if (section) {
  if (item) startPerson(item);
  else startList();
}

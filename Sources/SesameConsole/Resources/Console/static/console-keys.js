// Signing keys: the provider's keys with age, algorithm and state; rotation after a typed confirmation.

import { admin, el, say, formatDate, t, tn } from "/console/static/console.js";

// The word the operator types to rotate: the same in every language, since it is typed, not read.
const WORD = "rotate";

function age(seconds) {
  const days = Math.floor(seconds / 86400);
  if (days >= 1) return tn("console.keys.age-days", days);
  const hours = Math.floor(seconds / 3600);
  if (hours >= 1) return tn("console.keys.age-hours", hours);
  return t("console.keys.age-minutes");
}

function stateName(state) {
  switch (state) {
    case "current": return t("console.keys.current");
    case "published": return t("console.keys.published");
    case "retired": return t("console.keys.retired");
    default: return state;
  }
}

function show(keys) {
  document.getElementById("keys").replaceChildren(
    ...keys.map((key) =>
      el(
        "tr",
        {},
        el("td", {}, el("code", { text: key.kid })),
        el("td", { text: key.algorithm }),
        el("td", { text: stateName(key.state) }),
        el("td", { text: age(key.ageSeconds) }),
        el("td", { text: formatDate(key.createdAt) }),
      ),
    ),
  );
}

document.getElementById("rotate-word").textContent = WORD;
const confirm = document.getElementById("rotate-confirm");
const button = document.getElementById("rotate-button");
confirm.addEventListener("input", () => {
  button.disabled = confirm.value !== WORD;
});

document.getElementById("rotate").addEventListener("submit", async (event) => {
  event.preventDefault();
  if (confirm.value !== WORD) return;
  try {
    const { keys, rotated } = await admin("POST", "/api/admin/signing-keys/rotate");
    show(keys);
    confirm.value = "";
    button.disabled = true;
    say(t("console.keys.rotated", { keys: rotated.join(t("console.common.list-separator")) }), "success");
  } catch (error) {
    say(error.message, "error");
  }
});

admin("GET", "/api/admin/signing-keys")
  .then(({ keys }) => show(keys))
  .catch((error) => say(error.message, "error"));

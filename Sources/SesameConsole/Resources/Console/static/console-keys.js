// Signing keys: the provider's keys with age, algorithm and state; rotation after a typed confirmation.

import { admin, el, say, formatDate } from "/console/static/console.js";

function age(seconds) {
  const days = Math.floor(seconds / 86400);
  if (days >= 1) return `${days} day${days === 1 ? "" : "s"}`;
  const hours = Math.floor(seconds / 3600);
  if (hours >= 1) return `${hours} hour${hours === 1 ? "" : "s"}`;
  return "under an hour";
}

const states = { current: "current (signs new tokens)", published: "retired, still published", retired: "retired" };

function show(keys) {
  document.getElementById("keys").replaceChildren(
    ...keys.map((key) =>
      el(
        "tr",
        {},
        el("td", {}, el("code", { text: key.kid })),
        el("td", { text: key.algorithm }),
        el("td", { text: states[key.state] || key.state }),
        el("td", { text: age(key.ageSeconds) }),
        el("td", { text: formatDate(key.createdAt) }),
      ),
    ),
  );
}

const confirm = document.getElementById("rotate-confirm");
const button = document.getElementById("rotate-button");
confirm.addEventListener("input", () => {
  button.disabled = confirm.value !== "rotate";
});

document.getElementById("rotate").addEventListener("submit", async (event) => {
  event.preventDefault();
  if (confirm.value !== "rotate") return;
  try {
    const { keys, rotated } = await admin("POST", "/api/admin/signing-keys/rotate");
    show(keys);
    confirm.value = "";
    button.disabled = true;
    say(`New keys: ${rotated.join(", ")}.`, "success");
  } catch (error) {
    say(error.message, "error");
  }
});

admin("GET", "/api/admin/signing-keys")
  .then(({ keys }) => show(keys))
  .catch((error) => say(error.message, "error"));

// The console's gate page: for a password session or a passkey sign-in older than the console's window, one button
// asks for the passkey and then shows the page that was asked for.

import { confirmWithPasskey, say, t } from "./console.js";

const section = document.querySelector("section.gate");
const confirm = document.getElementById("confirm");
if (section && confirm && (section.dataset.reason === "passkey" || section.dataset.reason === "stale")) {
  confirm.hidden = false;
  document.getElementById("reauthenticate").addEventListener("click", async (event) => {
    const button = event.currentTarget;
    button.disabled = true;
    say(t("console.gate.waiting"));
    if (await confirmWithPasskey()) {
      say(t("console.gate.confirmed"), "success");
      location.reload();
    } else {
      say(t("console.gate.failed"), "error");
      button.disabled = false;
    }
  });
}

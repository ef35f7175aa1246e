// Account page, the password card (SesamePasswords): setting, changing (which signs the other sessions out) and
// removing the password.

import { api, call } from "./api.js";
import { $, say, busy, focus, show } from "./ui.js";
import { t, tn } from "./i18n.js";
import { section, account, loadAccount, reload, failed } from "./account.js";

/** This card's endpoints (its feature's routes), through api.js's `call`. */
const endpoints = {
  removePassword: () => call("DELETE", "/api/account/password"),
};

function render(account) {
  $("password-username").value = account.user.username;
  const has = account.hasPassword;
  $("password-status").textContent = has
    ? t("web.account.password.has")
    : t("web.account.password.none");
  show($("current-password-field"), has);
  $("password-submit").textContent = has ? t("web.account.password.change") : t("web.account.password.set");
  show($("password-remove"), has);
}

async function savePassword(event) {
  event.preventDefault();
  const current = $("current-password").value;
  const next = $("new-password").value;
  if (account.hasPassword && !current) {
    say(t("web.account.password.current-missing"), "error");
    return focus($("current-password"));
  }
  if (next.length < 8) {
    say(t("web.account.password.too-short"), "error");
    return focus($("new-password"));
  }
  await busy($("password-submit"), async () => {
    try {
      const result = await api.setPassword(account.hasPassword ? current : null, next);
      $("current-password").value = "";
      $("new-password").value = "";
      const others = result && result.count ? ` ${tn("web.account.password.others-signed-out", result.count)}` : "";
      say((result && result.status === "changed" ? t("web.account.password.changed") : t("web.account.password.was-set")) + others, "success");
      await loadAccount();
      await reload("sessions");
    } catch (error) {
      failed(error);
    }
  });
}

async function removePassword() {
  await busy($("password-remove"), async () => {
    try {
      await endpoints.removePassword();
      await loadAccount();
      say(t("web.account.password.removed"), "success");
    } catch (error) {
      failed(error);
    }
  });
}

function wire() {
  $("password-form").addEventListener("submit", savePassword);
  $("password-remove").addEventListener("click", removePassword);
}

section({ name: "password", anchor: "password", wire, render });

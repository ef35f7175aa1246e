// Sign-in page: AutoFill-assisted passkey request on load, modal request (with or without a username), a silent
// request where the browser can make one, and the password + second-step path. Every failure leaves the form
// usable and says what happened.

import { api, setCSRFToken } from "./api.js";
import * as webauthn from "./webauthn.js";
import { $, say, clear, busy, focus, show } from "./ui.js";
import { t } from "./i18n.js";

let conditional = null; // AbortController of the running AutoFill request
let pending = null; // { token, factors } while a second step is open

/**
 * Where to go after signing in: the `return` link an application's sign-in request came with, else the account
 * page. Only four of this site's own places are accepted, as paths on this origin: the authorization endpoint,
 * the device page, forward auth's return endpoint (which checks the address it goes on to against the configured
 * domains itself) and the operators' console. Anything else, including `//host` and `/\host` forms, goes to the
 * account page.
 */
export function returnTarget(search) {
  const target = new URLSearchParams(search).get("return");
  if (typeof target !== "string") return "/account";
  if (target === "/device" || target === "/console") return target;
  if (/^\/console\/[a-z0-9-]+(\/[A-Za-z0-9_-]+)?$/.test(target)) return target;
  return ["/oauth/authorize?", "/device?", "/forward-auth/return?"].some((prefix) => target.startsWith(prefix)) ? target : "/account"; // i18n-ignore
}

/** Whether the application asked for a passkey sign-in (`passkey=required`): the password path is then hidden. */
export function passkeyRequired(search) {
  return new URLSearchParams(search).get("passkey") === "required";
}

function signedIn(result) {
  setCSRFToken(result && result.csrfToken);
  const target = returnTarget(location.search);
  say(target === "/account" ? t("web.signin.opening-account") : t("web.signin.returning"), "success");
  location.assign(target);
}

function stopConditional() {
  if (conditional) {
    conditional.abort();
    conditional = null;
  }
}

/** Sends the assertion; on an unknown credential, tells the browser so it can hide that passkey. */
async function finish(options, credential) {
  try {
    const result = await api.authenticate({ credential: webauthn.credentialJSON(credential) });
    signedIn(result);
    return true;
  } catch (error) {
    if (error.code === "unknown_credential") {
      // The server names the credential and RP ID it does not know; the browser can then hide that passkey.
      const rpId = error.data.rpId || webauthn.publicKeyJSON(options).rpId || webauthn.pageRPID();
      await webauthn.signalUnknownCredential(rpId, error.data.credentialId || credential.id);
    }
    say(error.message, "error");
    return false;
  }
}

/** The AutoFill-assisted request: runs quietly until the person picks a passkey from the username field. */
async function startConditional() {
  if (!webauthn.supported() || typeof PublicKeyCredential.isConditionalMediationAvailable !== "function") return;
  stopConditional();
  const controller = new AbortController();
  conditional = controller;
  let options;
  try {
    options = await api.authenticationOptions();
  } catch {
    if (conditional === controller) conditional = null;
    return; // the form works without it
  }
  if (controller.signal.aborted) return;
  let credential;
  try {
    credential = await navigator.credentials.get({
      mediation: "conditional",
      publicKey: webauthn.requestOptions(options),
      signal: controller.signal,
    });
  } catch {
    if (conditional === controller) conditional = null;
    return; // aborted for a modal request, or AutoFill unavailable: the form stays
  }
  if (conditional === controller) conditional = null;
  if (credential && !(await finish(options, credential))) startConditional();
}

/** A modal request: all of this site's passkeys (no username) or the named account's credentials. */
async function modal(username, button) {
  if (!webauthn.supported()) {
    say(t("web.signin.no-passkeys"), "error");
    return;
  }
  stopConditional();
  clear();
  await busy(button, async () => {
    let options;
    try {
      options = await api.authenticationOptions(username);
    } catch (error) {
      say(error.message, "error");
      startConditional();
      return;
    }
    let credential;
    try {
      credential = await navigator.credentials.get({ publicKey: webauthn.requestOptions(options) });
    } catch (error) {
      say(webauthn.describeFailure(error), "error");
      focus($("username"));
      startConditional();
      return;
    }
    if (!(await finish(options, credential))) startConditional();
  });
}

/** Where the browser offers it, ask only for a passkey that is available without any prompt or QR code; with
 * none, fall back to the form without showing anything. */
async function silentRequest() {
  const forms = $("signin-forms");
  show($("checking"), true);
  forms.hidden = true;
  // Whatever the network or the browser does, the form comes back within a few seconds.
  const reveal = setTimeout(() => {
    show($("checking"), false);
    forms.hidden = false;
  }, 4000);
  try {
    const options = await api.authenticationOptions();
    const credential = await navigator.credentials.get({
      mediation: "immediate",
      publicKey: webauthn.requestOptions(options),
    });
    clearTimeout(reveal);
    show($("checking"), false);
    forms.hidden = false;
    if (credential) return await finish(options, credential);
  } catch (error) {
    // No passkey immediately available: fall through to the form. A TypeError means this browser reports the
    // capability but does not accept the request; the form is the answer then too, without a message.
    clearTimeout(reveal);
    show($("checking"), false);
    forms.hidden = false;
    if (error && error.name !== "TypeError") {
      say(t("web.signin.none-ready"), "info");
    }
    focus($("username"));
    return false;
  }
  clearTimeout(reveal);
  show($("checking"), false);
  forms.hidden = false;
  focus($("username"));
  return false;
}

/**
 * The second step's choices, one per factor, in the order the server offers them. The page is rendered with them
 * (`SecondStepChoice`): each carries its factor's name and the code field's words, and a factor whose code is sent
 * on request has a button naming its route. This script knows no factor by name.
 */
function factorChoices() {
  return Array.from(document.querySelectorAll("#factor-choice .choice"), (element) => ({
    element,
    factor: element.querySelector('input[name="factor"]').value,
  }));
}

function codeSenders() {
  return Array.from(document.querySelectorAll("#second-step-form button[data-path]"));
}

function openSecondStep(result) {
  pending = { token: result.pendingToken, factors: Array.isArray(result.factors) ? result.factors : [] };
  const offered = factorChoices().filter(({ element, factor }) => {
    const on = pending.factors.includes(factor);
    show(element, on);
    return on;
  });
  if (offered.length === 0) {
    say(t("web.signin.second-step-unavailable"), "error");
    return;
  }
  const first = offered[0].factor;
  $(`factor-${first}`).checked = true;
  chooseFactor(first);
  for (const id of ["username-form", "passkey-button", "other-ways"]) show($(id), false);
  document.querySelector(".divider").hidden = true;
  show($("second-step-form"), true);
  say(t("web.signin.second-step-prompt"), "info");
  focus($("code"));
}

function closeSecondStep() {
  pending = null;
  show($("second-step-form"), false);
  for (const id of ["username-form", "passkey-button", "other-ways"]) show($(id), true);
  document.querySelector(".divider").hidden = false;
  $("code").value = "";
  $("password").value = "";
  clear();
  focus($("username"));
  startConditional();
}

/** Sets the code field's words and keyboard to the chosen factor's, and shows its send button if it has one. */
function chooseFactor(factor) {
  const choice = $(`factor-${factor}-choice`).dataset;
  const code = $("code");
  for (const sender of codeSenders()) show(sender, sender.dataset.factor === factor);
  $("code-label").textContent = choice.codeLabel;
  $("code-hint").textContent = choice.codeHint;
  code.setAttribute("inputmode", choice.inputmode);
  code.setAttribute("autocomplete", choice.autocomplete);
}

function selectedFactor() {
  const checked = document.querySelector('input[name="factor"]:checked');
  return checked ? checked.value : null;
}

function wire() {
  $("username-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const username = $("username").value.trim();
    if (!username) {
      say(t("web.signin.enter-username"), "error");
      focus($("username"));
      return;
    }
    modal(username, $("continue-button"));
  });

  $("passkey-button").addEventListener("click", () => modal(null, $("passkey-button")));

  $("other-ways").addEventListener("toggle", () => {
    if ($("other-ways").open) {
      if (!$("password-username").value) $("password-username").value = $("username").value.trim();
      focus($("password-username").value ? $("password") : $("password-username"));
    }
  });

  $("password-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const username = $("password-username").value.trim();
    const password = $("password").value;
    if (!username || !password) {
      say(t("web.signin.enter-username-password"), "error");
      focus(username ? $("password") : $("password-username"));
      return;
    }
    stopConditional();
    clear();
    await busy($("password-button"), async () => {
      try {
        const result = await api.passwordSignIn(username, password);
        if (result && result.status === "second_factor_required") openSecondStep(result);
        else signedIn(result);
      } catch (error) {
        say(error.message, "error");
        $("password").value = "";
        focus($("password"));
        startConditional();
      }
    });
  });

  for (const input of document.querySelectorAll('input[name="factor"]')) {
    input.addEventListener("change", () => {
      chooseFactor(input.value);
      focus($("code"));
    });
  }

  for (const sender of codeSenders()) {
    sender.addEventListener("click", async () => {
      await busy(sender, async () => {
        try {
          await api.sendSecondFactorCode(sender.dataset.path, pending && pending.token);
          say(sender.dataset.sent, "success");
          focus($("code"));
        } catch (error) {
          say(error.message, "error");
        }
      });
    });
  }

  $("second-step-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const factor = selectedFactor();
    const code = $("code").value.trim();
    if (!factor || !code) {
      say(t("web.signin.enter-code"), "error");
      focus($("code"));
      return;
    }
    await busy($("code-button"), async () => {
      try {
        const result = await api.secondFactor(factor, code, pending && pending.token);
        signedIn(result);
      } catch (error) {
        say(error.message, "error");
        $("code").value = "";
        focus($("code"));
        if (error.code === "challenge_invalid") closeSecondStep();
      }
    });
  });

  $("second-step-cancel").addEventListener("click", closeSecondStep);
}

async function start() {
  wire();
  if (passkeyRequired(location.search)) {
    // A password session would be sent straight back here: offer only what the application accepts.
    show($("other-ways"), false);
    say(t("web.signin.passkey-required"), "info");
  }
  if (!webauthn.supported()) {
    say(t("web.signin.no-passkeys"), "info");
    $("other-ways").open = true;
    return;
  }
  const caps = await webauthn.capabilities();
  if (caps.immediateGet === true && (await silentRequest())) return;
  startConditional();
}

start();

// Recovery by email, where the server offers it (`emailRecovery`).
show($("recover-link"), $("recover-link").dataset.recovery === "on");

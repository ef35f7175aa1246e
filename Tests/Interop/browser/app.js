// Test page script: fetch options from the test server, run the WebAuthn ceremony in the browser, post the
// credential's toJSON() back and return the server's verification result to the caller (selenium).
"use strict";

async function postJSON(path, body) {
  const response = await fetch(path, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
  return response.json();
}

function log(line) {
  document.getElementById("log").textContent += line + "\n";
}

async function sesameRegister(params) {
  const options = await postJSON("/registration/options", params);
  const publicKey = PublicKeyCredential.parseCreationOptionsFromJSON(options);
  const credential = await navigator.credentials.create({ publicKey });
  const result = await postJSON("/registration/verify", credential.toJSON());
  log("registration: " + JSON.stringify(result));
  return result;
}

async function sesameSignIn(params) {
  const options = await postJSON("/authentication/options", params);
  const publicKey = PublicKeyCredential.parseRequestOptionsFromJSON(options);
  const credential = await navigator.credentials.get({ publicKey });
  const result = await postJSON("/authentication/verify", credential.toJSON());
  log("authentication: " + JSON.stringify(result));
  return result;
}

window.sesameRegister = sesameRegister;
window.sesameSignIn = sesameSignIn;

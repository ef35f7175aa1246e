-- wrk script for scripts/bench-server: complete passkey sign-ins (or sign-ups) against `sesame serve`.
--
-- Each wrk thread drives one connection (run wrk with -t N -c N) through a two-state loop:
--   options: POST /api/authentication/options   ({} for discoverable sign-in, {"username": …} for username-first)
--   verify:  POST /api/authentication            (an assertion signed here, with the thread's account's key)
-- or, in mode signup:
--   options: POST /api/registration/options     ({"username": a new name each time})
--   verify:  POST /api/registration              (attestation "none", a new random credential ID, the public key of
--                                                 the thread's account; answered 201 with a session)
-- or, in mode password (password + TOTP, for accounts with a password and a confirmed authenticator app):
--   options: POST /api/sessions/password        ({"username", "password"}; answered 200 with a pendingToken)
--   verify:  POST /api/sessions/second-factor   ({"factor": "totp", "code", "pendingToken"}; answered 200 with a
--                                                 session). Codes are RFC 6238 TOTP (HMAC-SHA-1, 6 digits, 30 s)
--                                                 computed here; the server accepts each step once per account, so a
--                                                 thread moves on to an account whose last accepted step is older.
-- or, in mode tokens (the identity provider's code flow, for a first-party client, so no consent page):
--   options: GET /oauth/authorize               (with the account's session cookie; answered 303 with a code)
--   verify:  POST /oauth/token                   (the code with its PKCE verifier and the client's secret; answered
--                                                 200 with an ES256 ID token and access token)
-- or, in mode allauth (the peer measured beside Sesame: django-allauth's headless API, `app` client; discoverable):
--   options: GET /_allauth/app/v1/auth/webauthn/login   (answered with request options and a session token)
--   verify:  POST /_allauth/app/v1/auth/webauthn/login  (X-Session-Token, {"credential": the same assertion as in
--                                                         discoverable mode}; answered 200 with a new session token)
--   Every request says Host: localhost (allauth takes the RP ID from the Host header).
-- The assertion is built as an authenticator and browser would: clientDataJSON {"type":"webauthn.get",
-- "challenge", "origin", "crossOrigin"}, authenticatorData = SHA-256(RP ID) || flags UP|UV || signCount 0, and an
-- ECDSA P-256 / SHA-256 signature (DER) over authenticatorData || SHA-256(clientDataJSON), made with OpenSSL's
-- libcrypto through LuaJIT's FFI.
--
-- Arguments after `--`: ACCOUNTS_FILE MODE ORIGIN RP_ID THREADS [CLIENT_ID CLIENT_SECRET REDIRECT_URI]
--   ACCOUNTS_FILE: one account per line, tab-separated: username, credential ID (base64url), user handle
--   (base64url), path of the PKCS#8 PEM private key, the public key as a COSE_Key (hex), and the session cookie
--   its sign-up was answered with (name=value); in mode password three more: the password, the TOTP secret (hex)
--   and the step its confirming code used. Thread i (1-based) uses lines i, i+N, i+2N, … in turn.
--   MODE: discoverable, username, signup, password, tokens or allauth. THREADS: wrk's -t (the same as -c). The client
--   arguments are for tokens only (the redirect URI percent-encoded).
-- done() prints one line starting with "BENCH_RESULT" (key=value pairs) for scripts/bench-server to read.

local ffi = require("ffi")

ffi.cdef [[
typedef struct bio_st BIO;
typedef struct evp_pkey_st EVP_PKEY;
typedef struct evp_pkey_ctx_st EVP_PKEY_CTX;
typedef struct evp_md_ctx_st EVP_MD_CTX;
typedef struct evp_md_st EVP_MD;
typedef struct engine_st ENGINE;
BIO *BIO_new_mem_buf(const void *buf, int len);
int BIO_free(BIO *bio);
EVP_PKEY *PEM_read_bio_PrivateKey(BIO *bio, EVP_PKEY **out, void *callback, void *userdata);
EVP_MD_CTX *EVP_MD_CTX_new(void);
const EVP_MD *EVP_sha256(void);
int EVP_DigestSignInit(EVP_MD_CTX *ctx, EVP_PKEY_CTX **pctx, const EVP_MD *md, ENGINE *engine, EVP_PKEY *pkey);
int EVP_DigestSign(EVP_MD_CTX *ctx, unsigned char *sig, size_t *siglen, const unsigned char *tbs, size_t tbslen);
unsigned char *SHA256(const unsigned char *data, size_t length, unsigned char *digest);
int EVP_EncodeBlock(unsigned char *out, const unsigned char *in, int length);
int RAND_bytes(unsigned char *buf, int num);
const EVP_MD *EVP_sha1(void);
unsigned char *HMAC(const EVP_MD *md, const void *key, int key_len, const unsigned char *data, size_t data_len,
                    unsigned char *out, unsigned int *out_len);
struct bench_timespec { long tv_sec; long tv_nsec; };
int clock_gettime(int clock, struct bench_timespec *tp);
]]

local crypto = ffi.load("libcrypto.so.3")
local CLOCK_REALTIME, CLOCK_MONOTONIC = 0, 1

local function now()
    local ts = ffi.new("struct bench_timespec")
    ffi.C.clock_gettime(CLOCK_MONOTONIC, ts)
    return tonumber(ts.tv_sec) + tonumber(ts.tv_nsec) * 1e-9
end

local function unix_time()
    local ts = ffi.new("struct bench_timespec")
    ffi.C.clock_gettime(CLOCK_REALTIME, ts)
    return tonumber(ts.tv_sec)
end

local function sha256(data)
    local digest = ffi.new("unsigned char[32]")
    crypto.SHA256(data, #data, digest)
    return ffi.string(digest, 32)
end

local function b64(data)
    local out = ffi.new("unsigned char[?]", 4 * math.ceil(#data / 3) + 1)
    return ffi.string(out, crypto.EVP_EncodeBlock(out, data, #data))
end

local function b64url(data)
    return (b64(data):gsub("%+", "-"):gsub("/", "_"):gsub("=", ""))
end

local function load_key(path)
    local file = assert(io.open(path, "rb"))
    local pem = file:read("*a")
    file:close()
    local bio = crypto.BIO_new_mem_buf(pem, #pem)
    local key = crypto.PEM_read_bio_PrivateKey(bio, nil, nil, nil)
    crypto.BIO_free(bio)
    assert(key ~= nil, "cannot read private key " .. path)
    return key
end

local signature_buffer, signature_length

-- Each account has its own EVP_MD_CTX: OpenSSL keeps the key context of a reused EVP_MD_CTX, so initialising one
-- context with another key would still sign with the first.
local function sign(account, message)
    assert(crypto.EVP_DigestSignInit(account.ctx, nil, crypto.EVP_sha256(), nil, account.key) == 1, "EVP_DigestSignInit failed")
    signature_length[0] = 80
    assert(crypto.EVP_DigestSign(account.ctx, signature_buffer, signature_length, message, #message) == 1, "EVP_DigestSign failed")
    return ffi.string(signature_buffer, tonumber(signature_length[0]))
end

-- Main state: give every thread its number; done() reads their counters back.
local threads = {}

function setup(thread)
    table.insert(threads, thread)
    thread:set("thread_index", #threads)
end

-- Thread state.
local accounts = {}
local mode, origin, rp_id_hash
local next_account = 1
-- The account of the current ceremony changes only when a ceremony ends, in response(): wrk may call request()
-- more than once before sending (it does at start), and every call must describe the same ceremony.
local phase = "options"
local account, challenge, ceremony
local started_at
completed, option_errors, verify_errors, parse_errors = 0, 0, 0, 0
latencies = {}

local function unhex(text)
    return (text:gsub("%x%x", function(h) return string.char(tonumber(h, 16)) end))
end

function init(args)
    local path = args[1]
    mode = args[2] or "discoverable"
    origin = args[3] or "http://localhost:8080"
    rp_id_hash = sha256(args[4] or "localhost")
    assert(mode == "discoverable" or mode == "username" or mode == "signup" or mode == "password" or mode == "tokens"
        or mode == "allauth", "mode must be discoverable, username, signup, password, tokens or allauth")
    client_id, client_secret, redirect_uri = args[6], args[7], args[8]
    assert(mode ~= "tokens" or (client_id and client_secret and redirect_uri), "tokens needs the client's id, secret and redirect URI")
    local total = tonumber(args[5])
    local index = 0
    for line in io.lines(path) do
        index = index + 1
        local f = {}
        for field in (line .. "\t"):gmatch("([^\t]*)\t") do f[#f + 1] = field end
        local username, credential_id, user_handle, key_path, cose, cookie = f[1], f[2], f[3], f[4], f[5], f[6] or ""
        assert(#f >= 5 and username ~= "" and cose:match("^%x+$"), "bad accounts line " .. index)
        assert(mode ~= "password" or (#f == 9 and f[8]:match("^%x+$") and tonumber(f[9])),
            "accounts line " .. index .. " has no password, TOTP secret and step")
        if (index - 1) % total == thread_index - 1 then
            table.insert(accounts, {
                username = username, credential_id = credential_id, user_handle = user_handle, key = load_key(key_path),
                ctx = crypto.EVP_MD_CTX_new(), cose = unhex(cose), cookie = cookie,
                password = f[7], totp_secret = f[8] and unhex(f[8]), last_step = tonumber(f[9] or "0"),
            })
        end
    end
    assert(#accounts > 0, "no account for thread " .. thread_index)
    account = accounts[1]
    signature_buffer = ffi.new("unsigned char[80]")
    signature_length = ffi.new("size_t[1]")
end

-- A fresh address from 198.18.0.0/15 (benchmarking range) per request: the server runs with
-- --trust-forwarded-for, so its per-address ceremony limit sees many clients instead of throttling this one.
local address_bytes = ffi.new("unsigned char[3]")
local function forwarded_for()
    crypto.RAND_bytes(address_bytes, 3)
    return string.format("198.%d.%d.%d", 18 + address_bytes[0] % 2, address_bytes[1], address_bytes[2])
end

local function json_string(s)
    -- Only base64url text and plain usernames are ever embedded; refuse anything that would need escaping.
    assert(not s:find('[%c"\\]'), "unexpected character in JSON string")
    return '"' .. s .. '"'
end

-- Sign-up: a name no account has (thread, counter and random bytes), and a new credential ID for each ceremony.
local signups = 0
local signup_name, signup_credential_id
local random_bytes = ffi.new("unsigned char[32]")
local function random_string(n)
    crypto.RAND_bytes(random_bytes, n)
    return ffi.string(random_bytes, n)
end

-- CBOR (RFC 8949) head of a byte string of length n < 65536.
local function cbor_bytes(data)
    local n = #data
    if n < 24 then return string.char(0x40 + n) .. data end
    if n < 256 then return "\x58" .. string.char(n) .. data end
    return "\x59" .. string.char(math.floor(n / 256), n % 256) .. data
end

local function signup_request(headers)
    if phase == "options" then
        started_at = now()
        signups = signups + 1
        signup_name = string.format("su-%d-%d-%s", thread_index, signups, b64url(random_string(6)))
        signup_credential_id = random_string(32)
        return wrk.format("POST", "/api/registration/options", headers, '{"username":' .. json_string(signup_name) .. '}')
    end
    local client_data = '{"type":"webauthn.create","challenge":' .. json_string(challenge) .. ',"origin":' ..
        json_string(origin) .. ',"crossOrigin":false}'
    -- authenticatorData: RP ID hash, flags UP|UV|AT, signCount 0, AAGUID zero, credential ID length and ID, COSE key.
    local authenticator_data = rp_id_hash .. "\x45\0\0\0\0" .. string.rep("\0", 16) .. "\0\32" ..
        signup_credential_id .. account.cose
    -- attestationObject {"fmt": "none", "attStmt": {}, "authData": …} in CTAP2 canonical key order.
    local attestation = "\xa3\x63fmt\x64none\x67attStmt\xa0\x68authData" .. cbor_bytes(authenticator_data)
    local id = b64url(signup_credential_id)
    local body = '{"credential":{"id":' .. json_string(id) .. ',"rawId":' .. json_string(id) ..
        ',"type":"public-key","clientExtensionResults":{},"authenticatorAttachment":"platform","response":{' ..
        '"clientDataJSON":' .. json_string(b64url(client_data)) .. ',"attestationObject":' ..
        json_string(b64url(attestation)) .. ',"transports":["internal"]}}}'
    return wrk.format("POST", "/api/registration", headers, body)
end

-- Tokens: one PKCE verifier for the run (each code is single-use whatever its challenge), and its S256 challenge.
local code_verifier = "bench-verifier-0123456789-abcdefghijklmnopqrstuvwxyz"
local function tokens_request()
    local headers = { ["X-Forwarded-For"] = forwarded_for() }
    if phase == "options" then
        started_at = now()
        headers["Cookie"] = account.cookie
        local path = "/oauth/authorize?response_type=code&scope=openid&state=s&nonce=n&client_id=" .. client_id ..
            "&redirect_uri=" .. redirect_uri .. "&code_challenge_method=S256&code_challenge=" ..
            b64url(sha256(code_verifier))
        return wrk.format("GET", path, headers)
    end
    headers["Content-Type"] = "application/x-www-form-urlencoded"
    headers["Authorization"] = "Basic " .. b64(client_id .. ":" .. client_secret)
    return wrk.format("POST", "/oauth/token", headers, "grant_type=authorization_code&code=" .. challenge ..
        "&redirect_uri=" .. redirect_uri .. "&code_verifier=" .. code_verifier)
end

-- Password + TOTP: the RFC 6238 code of a step (RFC 4226 §5.3 dynamic truncation of HMAC-SHA-1 over the step as
-- an 8-byte big-endian counter).
local hmac_out, hmac_length = ffi.new("unsigned char[20]"), ffi.new("unsigned int[1]")
local function totp_code(secret, step)
    local counter = "\0\0\0\0" .. string.char(math.floor(step / 16777216) % 256, math.floor(step / 65536) % 256,
        math.floor(step / 256) % 256, step % 256)
    assert(crypto.HMAC(crypto.EVP_sha1(), secret, #secret, counter, 8, hmac_out, hmac_length) ~= nil, "HMAC failed")
    local offset = hmac_out[19] % 16
    local value = (hmac_out[offset] % 128) * 16777216 + hmac_out[offset + 1] * 65536 + hmac_out[offset + 2] * 256 +
        hmac_out[offset + 3]
    return string.format("%06d", value % 1000000)
end

local pending_token, code_step
local waits_noted = 0

-- An account whose code for this step the server has not accepted yet, made current; false when every account of
-- this thread has used the step (the choice depends only on the accounts' last steps and the clock).
local function pick_password_account(step)
    local tried = 1
    while account.last_step >= step and tried < #accounts do
        next_account = next_account % #accounts + 1
        account = accounts[next_account]
        tried = tried + 1
    end
    return account.last_step < step
end

-- wrk asks before each request how long to wait. Password + TOTP waits for the next 30-second step when every
-- account has used this one: a replayed code would be refused (rightly), and the run would count it as an error.
function delay()
    if mode ~= "password" or phase ~= "options" then return 0 end
    local time = unix_time()
    local step = math.floor(time / 30)
    if pick_password_account(step) then return 0 end
    waits_noted = waits_noted + 1
    if waits_noted == 1 then
        io.stderr:write("thread ", thread_index, ": every account used this TOTP step; waiting for the next ",
            "(sign-ins/s understated; raise --password-accounts)\n")
    end
    return math.ceil(((step + 1) * 30 - time) * 1000) + 5
end

local function password_request(headers)
    if phase == "options" then
        started_at = now()
        pick_password_account(math.floor(unix_time() / 30))
        return wrk.format("POST", "/api/sessions/password", headers, '{"username":' .. json_string(account.username) ..
            ',"password":' .. json_string(account.password) .. '}')
    end
    code_step = math.floor(unix_time() / 30)
    return wrk.format("POST", "/api/sessions/second-factor", headers, '{"factor":"totp","code":"' ..
        totp_code(account.totp_secret, code_step) .. '","pendingToken":' .. json_string(pending_token) .. '}')
end

-- The assertion for the current challenge, signed with the account's key: the "credential" member of a sign-in.
local function assertion_json(with_user_handle)
    local client_data = '{"type":"webauthn.get","challenge":' .. json_string(challenge) .. ',"origin":' ..
        json_string(origin) .. ',"crossOrigin":false}'
    local authenticator_data = rp_id_hash .. "\5\0\0\0\0" -- flags UP|UV, signCount 0
    local signature = sign(account, authenticator_data .. sha256(client_data))
    local user_handle = with_user_handle and (',"userHandle":' .. json_string(account.user_handle)) or ""
    return '{"id":' .. json_string(account.credential_id) .. ',"rawId":' ..
        json_string(account.credential_id) .. ',"type":"public-key","clientExtensionResults":{},' ..
        '"authenticatorAttachment":"platform","response":{"clientDataJSON":' .. json_string(b64url(client_data)) ..
        ',"authenticatorData":' .. json_string(b64url(authenticator_data)) .. ',"signature":' ..
        json_string(b64url(signature)) .. user_handle .. '}}'
end

-- allauth: the session token of the ceremony (the options answer creates a session that holds the challenge).
local allauth_path = "/_allauth/app/v1/auth/webauthn/login"
local session_token
local function allauth_request()
    local headers = { ["Host"] = "localhost", ["X-Forwarded-For"] = forwarded_for() }
    if phase == "options" then
        started_at = now()
        return wrk.format("GET", allauth_path, headers)
    end
    headers["Content-Type"] = "application/json"
    headers["X-Session-Token"] = session_token
    return wrk.format("POST", allauth_path, headers, '{"credential":' .. assertion_json(true) .. '}')
end

function request()
    if mode == "tokens" then return tokens_request() end
    if mode == "allauth" then return allauth_request() end
    local headers = { ["Content-Type"] = "application/json", ["X-Forwarded-For"] = forwarded_for() }
    if ceremony then headers["Sesame-Ceremony"] = ceremony end
    if mode == "signup" then return signup_request(headers) end
    if mode == "password" then return password_request(headers) end
    if phase == "options" then
        started_at = now()
        local body = mode == "username" and ('{"username":' .. json_string(account.username) .. '}') or "{}"
        return wrk.format("POST", "/api/authentication/options", headers, body)
    end
    return wrk.format("POST", "/api/authentication", headers,
        '{"credential":' .. assertion_json(mode == "discoverable") .. '}')
end

-- The end of one ceremony (the verify or exchange answered): on to the thread's next account, and the ceremony
-- counted as completed (with its latency) or as an error (the first three printed).
local function finished(ok, what, status, body)
    next_account = next_account % #accounts + 1
    account = accounts[next_account]
    if ok then
        completed = completed + 1
        latencies[#latencies + 1] = now() - started_at
    else
        verify_errors = verify_errors + 1
        if verify_errors <= 3 then io.stderr:write(what, " answered ", status, ": ", body:sub(1, 200), "\n") end
    end
end

-- Tokens: the authorization answer carries the code in its Location; the token answer is the exchange.
local function tokens_response(status, headers, body)
    if phase == "options" then
        local location
        for name, value in pairs(headers) do
            if name:lower() == "location" then location = value end
        end
        local code = status == 303 and location and location:match("[?&]code=([%w_%-]+)")
        if not code then
            option_errors = option_errors + 1
            if option_errors <= 3 then io.stderr:write("authorize answered ", status, " ", tostring(location), "\n") end
            return
        end
        challenge = code
        phase = "verify"
        return
    end
    phase = "options"
    finished(status == 200 and body:find('"id_token"', 1, true), "token", status, body)
end

-- allauth: the options answer carries the challenge and the session token; a sign-in is a 200 that says the
-- session is authenticated and hands out its new session token.
local function allauth_response(status, headers, body)
    if phase == "options" then
        local sent_challenge = status == 200 and body:match('"challenge"%s*:%s*"([%w_%-]+)"')
        local token = status == 200 and body:match('"session_token"%s*:%s*"([%w_%-]+)"')
        if not (sent_challenge and token) then
            if status == 200 then parse_errors = parse_errors + 1 else option_errors = option_errors + 1 end
            return
        end
        challenge, session_token = sent_challenge, token
        phase = "verify"
        return
    end
    phase = "options"
    finished(status == 200 and body:find('"is_authenticated"%s*:%s*true') and body:find('"session_token"', 1, true),
             "allauth sign-in", status, body)
end

-- Password + TOTP: the password step answers with a pending token; the code step with a session.
local function password_response(status, headers, body)
    if phase == "options" then
        local token = status == 200 and body:match('"pendingToken"%s*:%s*"([%w_%-]+)"')
        if not token then
            if status == 200 then parse_errors = parse_errors + 1 else option_errors = option_errors + 1 end
            if option_errors + parse_errors <= 3 then io.stderr:write("password answered ", status, ": ", body:sub(1, 200), "\n") end
            return
        end
        pending_token = token
        phase = "verify"
        return
    end
    phase = "options"
    local ok = status == 200 and body:find('"signed_in"', 1, true)
    if ok then account.last_step = code_step end
    finished(ok, "second factor", status, body)
end

function response(status, headers, body)
    if mode == "tokens" then return tokens_response(status, headers, body) end
    if mode == "password" then return password_response(status, headers, body) end
    if mode == "allauth" then return allauth_response(status, headers, body) end
    if phase == "options" then
        local sent_challenge = status == 200 and body:match('"challenge"%s*:%s*"([%w_%-]+)"')
        if not sent_challenge then
            if status == 200 then parse_errors = parse_errors + 1 else option_errors = option_errors + 1 end
            return
        end
        for name, value in pairs(headers) do
            if name:lower() == "sesame-ceremony" then ceremony = value end
        end
        challenge = sent_challenge
        phase = "verify"
        return
    end
    phase = "options"
    finished(status == (mode == "signup" and 201 or 200), mode == "signup" and "sign-up" or "sign-in", status, body)
end

local function percentile(sorted, p)
    if #sorted == 0 then return 0 end
    local rank = math.max(1, math.ceil(p / 100 * #sorted))
    return sorted[rank]
end

function done(summary, latency, requests)
    local total, errors, parse = 0, 0, 0
    local all = {}
    for _, thread in ipairs(threads) do
        total = total + thread:get("completed")
        errors = errors + thread:get("option_errors") + thread:get("verify_errors")
        parse = parse + thread:get("parse_errors")
        for _, value in ipairs(thread:get("latencies")) do all[#all + 1] = value end
    end
    table.sort(all)
    local seconds = summary.duration / 1e6
    local socket = summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout
    io.write(string.format(
        "BENCH_RESULT sign_ins=%d seconds=%.3f sign_ins_per_second=%.1f requests=%d non_2xx=%d error_responses=%d " ..
        "parse_errors=%d socket_errors=%d " ..
        "signin_p50_ms=%.2f signin_p90_ms=%.2f signin_p99_ms=%.2f signin_max_ms=%.2f " ..
        "request_p50_ms=%.2f request_p90_ms=%.2f request_p99_ms=%.2f request_max_ms=%.2f\n",
        total, seconds, total / seconds, summary.requests, summary.errors.status, errors, parse, socket,
        percentile(all, 50) * 1e3, percentile(all, 90) * 1e3, percentile(all, 99) * 1e3, percentile(all, 100) * 1e3,
        latency:percentile(50) / 1e3, latency:percentile(90) / 1e3, latency:percentile(99) / 1e3, latency.max / 1e3))
end

--
-- PostgreSQL database dump
--


-- Dumped from database version 15.18 (Debian 15.18-0+deb12u1)
-- Dumped by pg_dump version 15.18 (Debian 15.18-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: public; Type: SCHEMA; Schema: -; Owner: -
--



SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: audit_events; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.audit_events (
    id text NOT NULL,
    at bigint NOT NULL,
    kind text NOT NULL,
    outcome text NOT NULL,
    user_id text,
    username text,
    client_address text NOT NULL,
    detail text NOT NULL
);


--
-- Name: challenges; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.challenges (
    id bytea NOT NULL,
    purpose text NOT NULL,
    binding bytea NOT NULL,
    user_id text,
    payload text NOT NULL,
    expires_at bigint NOT NULL
);


--
-- Name: credentials; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.credentials (
    id bytea NOT NULL,
    user_id text NOT NULL,
    public_key bytea NOT NULL,
    sign_count bigint NOT NULL,
    transports text NOT NULL,
    aaguid bytea,
    backup_eligible bigint NOT NULL,
    backed_up bigint NOT NULL,
    user_verified bigint NOT NULL,
    attestation_format text NOT NULL,
    name text NOT NULL,
    created_at bigint NOT NULL,
    last_used_at bigint
);


--
-- Name: keychain_devices; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.keychain_devices (
    user_id text NOT NULL,
    id bytea NOT NULL,
    public_key bytea NOT NULL,
    "position" bigint NOT NULL
);


--
-- Name: keychain_enrollments; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.keychain_enrollments (
    id text NOT NULL,
    user_id text NOT NULL,
    name text NOT NULL,
    device bytea,
    token_hash bytea NOT NULL,
    created_at bigint NOT NULL,
    last_used_at bigint NOT NULL
);


--
-- Name: keychain_join_requests; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.keychain_join_requests (
    user_id text NOT NULL,
    request bytea NOT NULL,
    device bytea NOT NULL,
    public_key bytea NOT NULL,
    approval bytea,
    created_at bigint NOT NULL
);


--
-- Name: keychain_records; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.keychain_records (
    user_id text NOT NULL,
    id bytea NOT NULL,
    version bigint NOT NULL,
    blob bytea NOT NULL,
    written_at bigint NOT NULL
);


--
-- Name: keychain_shares; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.keychain_shares (
    id bytea NOT NULL,
    user_id text NOT NULL,
    sender bytea NOT NULL,
    recipient bytea NOT NULL,
    blob bytea NOT NULL,
    created_at bigint NOT NULL
);


--
-- Name: keychain_vaults; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.keychain_vaults (
    user_id text NOT NULL,
    vault bytea NOT NULL,
    version bigint NOT NULL,
    manifest bytea NOT NULL,
    recovery_epoch bigint NOT NULL,
    recovery bytea NOT NULL,
    updated_at bigint NOT NULL
);


--
-- Name: keychain_wraps; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.keychain_wraps (
    user_id text NOT NULL,
    device bytea NOT NULL,
    epoch bigint NOT NULL,
    sender bytea NOT NULL,
    blob bytea NOT NULL
);


--
-- Name: metadata_blobs; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.metadata_blobs (
    number bigint NOT NULL,
    jwt text NOT NULL,
    roots text NOT NULL,
    verified_at bigint NOT NULL,
    imported_at bigint NOT NULL
);


--
-- Name: oauth_assertion_ids; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.oauth_assertion_ids (
    jti_hash bytea NOT NULL,
    expires_at bigint NOT NULL
);


--
-- Name: oauth_clients; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.oauth_clients (
    id text NOT NULL,
    name text NOT NULL,
    secret_hash bytea,
    redirect_uris text NOT NULL,
    post_logout_redirect_uris text NOT NULL,
    backchannel_logout_uri text,
    first_party bigint NOT NULL,
    id_token_alg text NOT NULL,
    created_at bigint NOT NULL,
    subject_type text DEFAULT 'public'::text NOT NULL,
    jwks text
);


--
-- Name: oauth_codes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.oauth_codes (
    code_hash bytea NOT NULL,
    grant_id text NOT NULL,
    redirect_uri text NOT NULL,
    code_challenge text NOT NULL,
    expires_at bigint NOT NULL,
    used_at bigint
);


--
-- Name: oauth_consents; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.oauth_consents (
    user_id text NOT NULL,
    client_id text NOT NULL,
    scope text NOT NULL,
    granted_at bigint NOT NULL
);


--
-- Name: oauth_device_codes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.oauth_device_codes (
    device_code_hash bytea NOT NULL,
    user_code_hash bytea NOT NULL,
    client_id text NOT NULL,
    scope text NOT NULL,
    status text NOT NULL,
    interval_seconds bigint NOT NULL,
    next_poll_at bigint NOT NULL,
    grant_id text,
    created_at bigint NOT NULL,
    expires_at bigint NOT NULL
);


--
-- Name: oauth_grants; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.oauth_grants (
    id text NOT NULL,
    client_id text NOT NULL,
    user_id text NOT NULL,
    scope text NOT NULL,
    nonce text,
    auth_time bigint NOT NULL,
    method text NOT NULL,
    created_at bigint NOT NULL,
    expires_at bigint NOT NULL,
    revoked_at bigint,
    passkey_backup_eligible bigint
);


--
-- Name: oauth_refresh_tokens; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.oauth_refresh_tokens (
    token_hash bytea NOT NULL,
    grant_id text NOT NULL,
    idle_expires_at bigint NOT NULL,
    used_at bigint
);


--
-- Name: oauth_signing_keys; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.oauth_signing_keys (
    kid text NOT NULL,
    alg text NOT NULL,
    private_key bytea NOT NULL,
    created_at bigint NOT NULL,
    retired_at bigint
);


--
-- Name: passwords; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.passwords (
    user_id text NOT NULL,
    hash bytea NOT NULL,
    salt bytea NOT NULL,
    log_n bigint NOT NULL,
    r bigint NOT NULL,
    p bigint NOT NULL,
    updated_at bigint NOT NULL
);


--
-- Name: rate_limits; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.rate_limits (
    bucket text NOT NULL,
    window_start bigint NOT NULL,
    failures bigint NOT NULL
);


--
-- Name: recovery_code_sets; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.recovery_code_sets (
    user_id text NOT NULL,
    salt bytea NOT NULL,
    created_at bigint NOT NULL
);


--
-- Name: recovery_codes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.recovery_codes (
    user_id text NOT NULL,
    code_hash bytea NOT NULL,
    used_at bigint
);


--
-- Name: server_secrets; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.server_secrets (
    name text NOT NULL,
    value bytea NOT NULL,
    created_at bigint NOT NULL
);


--
-- Name: sesame_migrations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.sesame_migrations (
    version bigint NOT NULL,
    name text NOT NULL,
    applied_at bigint NOT NULL
);


--
-- Name: sessions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.sessions (
    token_hash bytea NOT NULL,
    id text NOT NULL,
    user_id text NOT NULL,
    created_at bigint NOT NULL,
    last_seen_at bigint NOT NULL,
    expires_at bigint NOT NULL,
    user_agent text NOT NULL,
    method text NOT NULL,
    authenticated_at bigint DEFAULT 0 NOT NULL,
    passkey_backup_eligible bigint
);


--
-- Name: sms; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.sms (
    user_id text NOT NULL,
    phone text NOT NULL,
    confirmed bigint DEFAULT 0 NOT NULL,
    created_at bigint NOT NULL
);


--
-- Name: totp; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.totp (
    user_id text NOT NULL,
    secret bytea NOT NULL,
    last_step bigint DEFAULT '-1'::integer NOT NULL,
    confirmed bigint DEFAULT 0 NOT NULL,
    created_at bigint NOT NULL
);


--
-- Name: users; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.users (
    id text NOT NULL,
    username text NOT NULL,
    username_key text NOT NULL,
    display_name text NOT NULL,
    user_handle bytea NOT NULL,
    disabled bigint DEFAULT 0 NOT NULL,
    created_at bigint NOT NULL
);


--
-- Data for Name: audit_events; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.audit_events VALUES ('0e93aad9-9e83-4fca-a2a9-2f343a533769', 1795562432980, 'sign_up.passkey', 'success', '24eb56fe-0e46-4d31-8686-36f80919f965', 'fixture-alice', '198.18.237.46', '');
INSERT INTO public.audit_events VALUES ('e552fca4-57d8-4c04-bdb9-15b883a77e31', 1795562433000, 'sign_up.passkey', 'success', '1a03773a-f5bb-44b1-9852-5da2f56476be', 'fixture-bob', '198.18.63.60', '');
INSERT INTO public.audit_events VALUES ('d83c2d40-531f-4533-b421-d8b06c50a6b4', 1795562433020, 'sign_in.passkey', 'success', '1a03773a-f5bb-44b1-9852-5da2f56476be', 'fixture-bob', '198.18.121.214', '');
INSERT INTO public.audit_events VALUES ('443fc538-c23a-48f4-b36a-39e9ed0244c6', 1795562433050, 'password.set', 'success', '1a03773a-f5bb-44b1-9852-5da2f56476be', 'fixture-bob', '198.18.86.19', '1 other sessions signed out');
INSERT INTO public.audit_events VALUES ('a1f65c4b-6823-4af3-be47-c8c6c954d5a6', 1795562433082, 'totp.enabled', 'success', '1a03773a-f5bb-44b1-9852-5da2f56476be', 'fixture-bob', '198.18.86.250', '');
INSERT INTO public.audit_events VALUES ('86978248-6d61-4b54-a036-37b37faeb479', 1795562433098, 'recovery_codes.generated', 'success', '1a03773a-f5bb-44b1-9852-5da2f56476be', 'fixture-bob', '198.18.211.182', '');
INSERT INTO public.audit_events VALUES ('74179e88-546d-475a-9e56-1d59b38831ec', 1795562433138, 'sign_in.password', 'pending_second_factor', '1a03773a-f5bb-44b1-9852-5da2f56476be', 'fixture-bob', '198.18.44.18', '');
INSERT INTO public.audit_events VALUES ('e89be4d0-5cfe-4be2-b725-581ad52c7303', 1795562433162, 'recovery_code.used', 'success', '1a03773a-f5bb-44b1-9852-5da2f56476be', 'fixture-bob', '198.18.74.16', '');
INSERT INTO public.audit_events VALUES ('05d4dd51-c415-40e1-83ae-72f713c4cbbb', 1795562433174, 'sign_in.second_factor', 'success', '1a03773a-f5bb-44b1-9852-5da2f56476be', 'fixture-bob', '198.18.74.16', 'recovery');
INSERT INTO public.audit_events VALUES ('8ba16183-efde-4920-890e-55b749738c81', 1795562433373, 'client.added', 'success', NULL, NULL, 'cli', 'sesame_1DUXVMraY8tJbfaP');


--
-- Data for Name: challenges; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: credentials; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.credentials VALUES ('\xe646e531c3e647edbd13bae962051be1fa9b5b42a547d1a86fb8c8717f56819f', '24eb56fe-0e46-4d31-8686-36f80919f965', '\xa5010203262001215820d02c92246cb6582bc74b21ae2fd6839831723bc4cbc34ebef3875645530984552258204f5d5a188f29b6713be461a5c5dcf22760b4d6b5e0d9f6e87d62fcd8891ec4f8', 0, 'internal', '\x00000000000000000000000000000000', 0, 0, 1, 'none', 'Passkey', 1795562432980, NULL);
INSERT INTO public.credentials VALUES ('\x4df1ba1027baf78b8f41ff0e85cd4a75bd5a557ebb1a8df0a05fdb3111e26de1', '1a03773a-f5bb-44b1-9852-5da2f56476be', '\xa5010203262001215820b5d10c3a2f407a02c49405fec30c37fe85428ac880be87c4300fc444f509b6812258202d97a0cda2c49aee5dc128047f3430ca26d18180c59912a3735ba488b2c465dd', 0, 'internal', '\x00000000000000000000000000000000', 0, 0, 1, 'none', 'Passkey', 1795562433000, 1795562433020);


--
-- Data for Name: keychain_devices; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: keychain_enrollments; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: keychain_join_requests; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: keychain_records; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: keychain_shares; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: keychain_vaults; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: keychain_wraps; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: metadata_blobs; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: oauth_assertion_ids; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: oauth_clients; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.oauth_clients VALUES ('sesame_1DUXVMraY8tJbfaP', 'Fixture App', '\xa627bc92a3ca425f8bbbe7ef49434e367ea36001994edd1b636bac8ed157f014', '["https:\/\/app.example\/callback"]', '[]', NULL, 0, 'ES256', 1795562433371, 'public', NULL);


--
-- Data for Name: oauth_codes; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: oauth_consents; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: oauth_device_codes; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: oauth_grants; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: oauth_refresh_tokens; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: oauth_signing_keys; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: passwords; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.passwords VALUES ('1a03773a-f5bb-44b1-9852-5da2f56476be', '\xb99ee30fc5e877275ea00119640763052270dc83a0e47eb1994747709c6eb0bc', '\xb15142f59bbc869c3f13667687461159', 10, 8, 1, 1795562433043);


--
-- Data for Name: rate_limits; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.rate_limits VALUES ('ceremony:addr:c47f93cbe9b922473ca17dc59cc727d5', 1795562432965, 1);
INSERT INTO public.rate_limits VALUES ('ceremony:addr:697f328c615844032a934a9d4479023e', 1795562432988, 1);
INSERT INTO public.rate_limits VALUES ('ceremony:addr:6f42b718a40cc7a4e0fc058c194c1cef', 1795562433008, 1);
INSERT INTO public.rate_limits VALUES ('addr:2997364660fff355ccc6c5dc3a12ba04', 1795562433067, 0);
INSERT INTO public.rate_limits VALUES ('addr:d72e295f083494907a2b40cd88b14697', 1795562433103, 0);
INSERT INTO public.rate_limits VALUES ('addr:3504419dbb2255489e832ffcd2698b9f', 1795562433146, 0);


--
-- Data for Name: recovery_code_sets; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.recovery_code_sets VALUES ('1a03773a-f5bb-44b1-9852-5da2f56476be', '\x39c5c7ed48aa03fc87e8217375824053', 1795562433090);


--
-- Data for Name: recovery_codes; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.recovery_codes VALUES ('1a03773a-f5bb-44b1-9852-5da2f56476be', '\x94c9ac67cd5bd89938d8b7535daa69f380f77af8efb5897f5c3319bb57b2dd5f', NULL);
INSERT INTO public.recovery_codes VALUES ('1a03773a-f5bb-44b1-9852-5da2f56476be', '\x237963b511867a50b7ee3b64b563ecab468e69e806ee9e5ff8cfee29a6d0ef47', NULL);
INSERT INTO public.recovery_codes VALUES ('1a03773a-f5bb-44b1-9852-5da2f56476be', '\x04482fa3e954c4da392de83a188c1d04759c1b32a67790557d748d3babe3381f', NULL);
INSERT INTO public.recovery_codes VALUES ('1a03773a-f5bb-44b1-9852-5da2f56476be', '\x8283b649fcdcd8f145568ec919c55ddb224ffadddbd06b2665a88b0fd5a7c7cb', NULL);
INSERT INTO public.recovery_codes VALUES ('1a03773a-f5bb-44b1-9852-5da2f56476be', '\x5abdb974a3dcdc6251f676129fb665c5dab4d194729fc887ec3f33c6edfec0d4', NULL);
INSERT INTO public.recovery_codes VALUES ('1a03773a-f5bb-44b1-9852-5da2f56476be', '\x50dacf510c8776dbd8e7edeeae4c2d3342145d59b177279d916931f806f0748e', NULL);
INSERT INTO public.recovery_codes VALUES ('1a03773a-f5bb-44b1-9852-5da2f56476be', '\x332fb824df5cefb3a9b86914c49f308ba65915f2394483208574f9da1731a24d', NULL);
INSERT INTO public.recovery_codes VALUES ('1a03773a-f5bb-44b1-9852-5da2f56476be', '\x521612a2dfc1e424ed9e4f6583f0c382f2d4ec4674975ab57a61b770852b6a14', NULL);
INSERT INTO public.recovery_codes VALUES ('1a03773a-f5bb-44b1-9852-5da2f56476be', '\x5446a7342733588793edd685b0591c7b91f349a631deb69f52b536529e26db6c', NULL);
INSERT INTO public.recovery_codes VALUES ('1a03773a-f5bb-44b1-9852-5da2f56476be', '\x2ea2d5e30207c605fa6fe922ae06949cdf2577f5e7ceddadbcc009d55836959b', 1795562433155);


--
-- Data for Name: server_secrets; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.server_secrets VALUES ('server', '\xba6eef54f218a24ce6badc08405d25f402b8eb1dcf34e7582a5b74d77e6b3704', 1795562432507);


--
-- Data for Name: sesame_migrations; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.sesame_migrations VALUES (1, 'accounts, factors, sessions, challenges, rate limits, audit, secrets', 1795562432507);
INSERT INTO public.sesame_migrations VALUES (2, 'encrypt TOTP secrets and SMS phone numbers at rest', 1795562432507);
INSERT INTO public.sesame_migrations VALUES (3, 'sessions remember when their holder last authenticated', 1795562432507);
INSERT INTO public.sesame_migrations VALUES (4, 'OpenID Connect provider: clients, signing keys, grants, codes, refresh tokens, consents', 1795562432507);
INSERT INTO public.sesame_migrations VALUES (5, 'keychain sync: device enrollments, vaults, sealed records, key wraps, devices, joins, shares', 1795562432507);
INSERT INTO public.sesame_migrations VALUES (6, 'OAuth device authorization grant (RFC 8628)', 1795562432507);
INSERT INTO public.sesame_migrations VALUES (8, 'OpenID Connect clients: pairwise subject identifiers', 1795562432507);
INSERT INTO public.sesame_migrations VALUES (9, 'OpenID Connect clients: private_key_jwt keys and spent assertion ids', 1795562432507);
INSERT INTO public.sesame_migrations VALUES (10, 'FIDO metadata BLOBs imported by the operator', 1795562432507);
INSERT INTO public.sesame_migrations VALUES (11, 'whether a session''s passkey was backup-eligible, for amr hwk/swk', 1795562432507);


--
-- Data for Name: sessions; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.sessions VALUES ('\x62a701776cf29f0d2a85950c9bef36f7cc35a68c5b0d6f0b3fe939fc7591a9ca', '_4gbsY0bGYntmoyj', '24eb56fe-0e46-4d31-8686-36f80919f965', 1795562432980, 1795562432980, 1796772032980, '', 'passkey', 1795562432980, 0);
INSERT INTO public.sessions VALUES ('\xe44c5ac84314c1f8e369ae2a2fabaa76a5ea40e42ef46ceeb270e5e8bf21b0d3', 'Nb3E59HNSCfV3r_s', '1a03773a-f5bb-44b1-9852-5da2f56476be', 1795562433020, 1795562433020, 1796772033020, '', 'passkey', 1795562433020, 0);
INSERT INTO public.sessions VALUES ('\xf81b93a6a89c457084e34729579574764c9490cae5fcbe624c69a96c89c3474c', 'ayLWavmVKtwVPpiV', '1a03773a-f5bb-44b1-9852-5da2f56476be', 1795562433170, 1795562433170, 1796772033170, '', 'password+recovery', 1795562433170, NULL);


--
-- Data for Name: sms; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: totp; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.totp VALUES ('1a03773a-f5bb-44b1-9852-5da2f56476be', '\x018479baa0bbe0bc68ac80058f76f03d9d289e6d1cd57192e347a5affe58f643363da3174c963ec09f136de07f800ff55b', 59852081, 1, 1795562433059);


--
-- Data for Name: users; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.users VALUES ('24eb56fe-0e46-4d31-8686-36f80919f965', 'fixture-alice', 'fixture-alice', 'fixture-alice', '\x77e26b93457743811dd010b93018ad9ea06d9ec0f82f418396305f87df0a9f04cf9634b1c2d86e4342d231e360f24bed66a8ece4368f3bc50ae9223f38e1ddac', 0, 1795562432980);
INSERT INTO public.users VALUES ('1a03773a-f5bb-44b1-9852-5da2f56476be', 'fixture-bob', 'fixture-bob', 'fixture-bob', '\x5ce709d463af113ba500c3e3afc301e9002988cc94ff14faad6897f7c772947d887ceb53d42d30ad8517df3f1ae56e03922cf4b0e2a02f14f1e7168c256bfeed', 0, 1795562433000);


--
-- Name: audit_events audit_events_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.audit_events
    ADD CONSTRAINT audit_events_pkey PRIMARY KEY (id);


--
-- Name: challenges challenges_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.challenges
    ADD CONSTRAINT challenges_pkey PRIMARY KEY (id);


--
-- Name: credentials credentials_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.credentials
    ADD CONSTRAINT credentials_pkey PRIMARY KEY (id);


--
-- Name: keychain_devices keychain_devices_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.keychain_devices
    ADD CONSTRAINT keychain_devices_pkey PRIMARY KEY (user_id, id);


--
-- Name: keychain_enrollments keychain_enrollments_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.keychain_enrollments
    ADD CONSTRAINT keychain_enrollments_pkey PRIMARY KEY (id);


--
-- Name: keychain_join_requests keychain_join_requests_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.keychain_join_requests
    ADD CONSTRAINT keychain_join_requests_pkey PRIMARY KEY (user_id, request);


--
-- Name: keychain_records keychain_records_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.keychain_records
    ADD CONSTRAINT keychain_records_pkey PRIMARY KEY (user_id, id);


--
-- Name: keychain_shares keychain_shares_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.keychain_shares
    ADD CONSTRAINT keychain_shares_pkey PRIMARY KEY (id);


--
-- Name: keychain_vaults keychain_vaults_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.keychain_vaults
    ADD CONSTRAINT keychain_vaults_pkey PRIMARY KEY (user_id);


--
-- Name: keychain_wraps keychain_wraps_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.keychain_wraps
    ADD CONSTRAINT keychain_wraps_pkey PRIMARY KEY (user_id, device, epoch);


--
-- Name: metadata_blobs metadata_blobs_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.metadata_blobs
    ADD CONSTRAINT metadata_blobs_pkey PRIMARY KEY (number);


--
-- Name: oauth_assertion_ids oauth_assertion_ids_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.oauth_assertion_ids
    ADD CONSTRAINT oauth_assertion_ids_pkey PRIMARY KEY (jti_hash);


--
-- Name: oauth_clients oauth_clients_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.oauth_clients
    ADD CONSTRAINT oauth_clients_pkey PRIMARY KEY (id);


--
-- Name: oauth_codes oauth_codes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.oauth_codes
    ADD CONSTRAINT oauth_codes_pkey PRIMARY KEY (code_hash);


--
-- Name: oauth_consents oauth_consents_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.oauth_consents
    ADD CONSTRAINT oauth_consents_pkey PRIMARY KEY (user_id, client_id);


--
-- Name: oauth_device_codes oauth_device_codes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.oauth_device_codes
    ADD CONSTRAINT oauth_device_codes_pkey PRIMARY KEY (device_code_hash);


--
-- Name: oauth_device_codes oauth_device_codes_user_code_hash_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.oauth_device_codes
    ADD CONSTRAINT oauth_device_codes_user_code_hash_key UNIQUE (user_code_hash);


--
-- Name: oauth_grants oauth_grants_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.oauth_grants
    ADD CONSTRAINT oauth_grants_pkey PRIMARY KEY (id);


--
-- Name: oauth_refresh_tokens oauth_refresh_tokens_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.oauth_refresh_tokens
    ADD CONSTRAINT oauth_refresh_tokens_pkey PRIMARY KEY (token_hash);


--
-- Name: oauth_signing_keys oauth_signing_keys_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.oauth_signing_keys
    ADD CONSTRAINT oauth_signing_keys_pkey PRIMARY KEY (kid);


--
-- Name: passwords passwords_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.passwords
    ADD CONSTRAINT passwords_pkey PRIMARY KEY (user_id);


--
-- Name: rate_limits rate_limits_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.rate_limits
    ADD CONSTRAINT rate_limits_pkey PRIMARY KEY (bucket);


--
-- Name: recovery_code_sets recovery_code_sets_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.recovery_code_sets
    ADD CONSTRAINT recovery_code_sets_pkey PRIMARY KEY (user_id);


--
-- Name: recovery_codes recovery_codes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.recovery_codes
    ADD CONSTRAINT recovery_codes_pkey PRIMARY KEY (user_id, code_hash);


--
-- Name: server_secrets server_secrets_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.server_secrets
    ADD CONSTRAINT server_secrets_pkey PRIMARY KEY (name);


--
-- Name: sesame_migrations sesame_migrations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sesame_migrations
    ADD CONSTRAINT sesame_migrations_pkey PRIMARY KEY (version);


--
-- Name: sessions sessions_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sessions
    ADD CONSTRAINT sessions_id_key UNIQUE (id);


--
-- Name: sessions sessions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sessions
    ADD CONSTRAINT sessions_pkey PRIMARY KEY (token_hash);


--
-- Name: sms sms_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sms
    ADD CONSTRAINT sms_pkey PRIMARY KEY (user_id);


--
-- Name: totp totp_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.totp
    ADD CONSTRAINT totp_pkey PRIMARY KEY (user_id);


--
-- Name: users users_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.users
    ADD CONSTRAINT users_pkey PRIMARY KEY (id);


--
-- Name: users users_user_handle_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.users
    ADD CONSTRAINT users_user_handle_key UNIQUE (user_handle);


--
-- Name: users users_username_key_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.users
    ADD CONSTRAINT users_username_key_key UNIQUE (username_key);


--
-- Name: audit_events_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX audit_events_at ON public.audit_events USING btree (at);


--
-- Name: audit_events_user; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX audit_events_user ON public.audit_events USING btree (user_id);


--
-- Name: challenges_expiry; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX challenges_expiry ON public.challenges USING btree (expires_at);


--
-- Name: credentials_user; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX credentials_user ON public.credentials USING btree (user_id);


--
-- Name: keychain_enrollments_user; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX keychain_enrollments_user ON public.keychain_enrollments USING btree (user_id, device);


--
-- Name: keychain_records_written; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX keychain_records_written ON public.keychain_records USING btree (user_id, written_at);


--
-- Name: keychain_shares_recipient; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX keychain_shares_recipient ON public.keychain_shares USING btree (recipient);


--
-- Name: keychain_shares_user; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX keychain_shares_user ON public.keychain_shares USING btree (user_id, sender);


--
-- Name: oauth_grants_user; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX oauth_grants_user ON public.oauth_grants USING btree (user_id, client_id);


--
-- Name: oauth_refresh_tokens_grant; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX oauth_refresh_tokens_grant ON public.oauth_refresh_tokens USING btree (grant_id);


--
-- Name: sessions_user; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX sessions_user ON public.sessions USING btree (user_id);


--
-- Name: credentials credentials_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.credentials
    ADD CONSTRAINT credentials_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: keychain_devices keychain_devices_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.keychain_devices
    ADD CONSTRAINT keychain_devices_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: keychain_enrollments keychain_enrollments_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.keychain_enrollments
    ADD CONSTRAINT keychain_enrollments_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: keychain_join_requests keychain_join_requests_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.keychain_join_requests
    ADD CONSTRAINT keychain_join_requests_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: keychain_records keychain_records_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.keychain_records
    ADD CONSTRAINT keychain_records_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: keychain_shares keychain_shares_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.keychain_shares
    ADD CONSTRAINT keychain_shares_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: keychain_vaults keychain_vaults_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.keychain_vaults
    ADD CONSTRAINT keychain_vaults_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: keychain_wraps keychain_wraps_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.keychain_wraps
    ADD CONSTRAINT keychain_wraps_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: oauth_codes oauth_codes_grant_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.oauth_codes
    ADD CONSTRAINT oauth_codes_grant_id_fkey FOREIGN KEY (grant_id) REFERENCES public.oauth_grants(id) ON DELETE CASCADE;


--
-- Name: oauth_consents oauth_consents_client_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.oauth_consents
    ADD CONSTRAINT oauth_consents_client_id_fkey FOREIGN KEY (client_id) REFERENCES public.oauth_clients(id) ON DELETE CASCADE;


--
-- Name: oauth_consents oauth_consents_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.oauth_consents
    ADD CONSTRAINT oauth_consents_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: oauth_device_codes oauth_device_codes_client_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.oauth_device_codes
    ADD CONSTRAINT oauth_device_codes_client_id_fkey FOREIGN KEY (client_id) REFERENCES public.oauth_clients(id) ON DELETE CASCADE;


--
-- Name: oauth_device_codes oauth_device_codes_grant_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.oauth_device_codes
    ADD CONSTRAINT oauth_device_codes_grant_id_fkey FOREIGN KEY (grant_id) REFERENCES public.oauth_grants(id) ON DELETE CASCADE;


--
-- Name: oauth_grants oauth_grants_client_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.oauth_grants
    ADD CONSTRAINT oauth_grants_client_id_fkey FOREIGN KEY (client_id) REFERENCES public.oauth_clients(id) ON DELETE CASCADE;


--
-- Name: oauth_grants oauth_grants_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.oauth_grants
    ADD CONSTRAINT oauth_grants_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: oauth_refresh_tokens oauth_refresh_tokens_grant_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.oauth_refresh_tokens
    ADD CONSTRAINT oauth_refresh_tokens_grant_id_fkey FOREIGN KEY (grant_id) REFERENCES public.oauth_grants(id) ON DELETE CASCADE;


--
-- Name: passwords passwords_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.passwords
    ADD CONSTRAINT passwords_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: recovery_code_sets recovery_code_sets_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.recovery_code_sets
    ADD CONSTRAINT recovery_code_sets_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: recovery_codes recovery_codes_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.recovery_codes
    ADD CONSTRAINT recovery_codes_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: sessions sessions_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sessions
    ADD CONSTRAINT sessions_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: sms sms_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sms
    ADD CONSTRAINT sms_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: totp totp_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.totp
    ADD CONSTRAINT totp_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- PostgreSQL database dump complete
--



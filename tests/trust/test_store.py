"""Trust: key windows, signed revocation lists, the sealed layout, verification at scale."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import timedelta

import pytest
from cardkit import FIXED_KEY, OTHER_KEY, make_card, write_card
from click.testing import CliRunner

from cartograph import clock
from cartograph.cards import verify_pool as pool
from cartograph.cards.seal import sign_card, verify_card, verify_stored
from cartograph.cli import main
from cartograph.errors import KeyError_, TrustError, UsageError, VerificationError
from cartograph.storage import load_verified, open_store
from cartograph.trust.keys import public_pem
from cartograph.trust.lifecycle import init_key, trust_key
from cartograph.trust.revocation import revocations_file
from cartograph.trust.revoke import reset_revocations, revoke_key
from cartograph.trust.store import TrustStore, trust_file
from cartograph.workspace import Workspace

PAST = "2026-01-01T00:00:00Z"


def run(home, *args):
    return CliRunner().invoke(main, ["--home", str(home), *args], catch_exceptions=False)


@pytest.fixture
def ws(tmp_path):
    ws = Workspace(tmp_path / "home")
    init_key(ws)
    return ws


def peer_pem(tmp_path, key=OTHER_KEY, name="peer.pub"):
    path = tmp_path / name
    path.write_bytes(public_pem(key.public_key))
    return path


def own_key(ws):
    from cartograph.trust.keys import load_key

    return load_key(ws)


def test_own_key_is_trusted_from_the_moment_it_was_created(ws):
    key = own_key(ws)
    entry = TrustStore.for_workspace(ws).entry(key.key_id)
    assert entry is not None and entry.origin == "operator" and entry.not_after is None
    assert entry.not_before is not None and entry.not_before <= clock.now()
    verify_card(sign_card(make_card(), key), TrustStore.for_workspace(ws))
    with pytest.raises(TrustError, match="before the key's window") as info:
        verify_card(sign_card(make_card(), key, signed_at=PAST), TrustStore.for_workspace(ws))
    assert info.value.kind == "not-yet-valid" and info.value.key_id == key.key_id


def test_workspace_without_trust_json_still_trusts_operator_pub_and_trusted_dir(tmp_path):
    ws = Workspace(tmp_path / "legacy")
    ws.trusted_dir.mkdir(parents=True)
    ws.public_key.write_bytes(public_pem(FIXED_KEY.public_key))
    (ws.trusted_dir / "friend.pub").write_bytes(public_pem(OTHER_KEY.public_key))
    store = TrustStore.for_workspace(ws)
    assert {e.origin for e in store.entries()} == {"operator", "legacy"}
    assert store.entry(OTHER_KEY.key_id).name == "friend"
    for key in (FIXED_KEY, OTHER_KEY):  # open windows: old signing times are fine
        verify_card(sign_card(make_card(), key, signed_at=PAST), store)
    assert not trust_file(ws).exists()


def test_trusted_peer_key_verifies_only_inside_its_window(ws, tmp_path):
    entry = trust_key(
        ws,
        peer_pem(tmp_path),
        name="acme",
        not_before=clock.parse("2026-03-01"),
        not_after=clock.parse("2026-06-30T00:00:00Z"),
    )
    assert entry.key_id == OTHER_KEY.key_id and entry.name == "acme"
    store = TrustStore.for_workspace(ws)
    verify_card(sign_card(make_card(), OTHER_KEY, signed_at="2026-04-01T00:00:00Z"), store)
    with pytest.raises(TrustError, match="after the key's window") as late:
        verify_card(sign_card(make_card(), OTHER_KEY, signed_at="2026-07-01T00:00:00Z"), store)
    assert late.value.kind == "expired" and OTHER_KEY.key_id in str(late.value)
    assert "acme" in str(late.value)
    with pytest.raises(TrustError) as early:
        verify_card(sign_card(make_card(), OTHER_KEY, signed_at="2026-02-01T00:00:00Z"), store)
    assert early.value.kind == "not-yet-valid"


def test_card_claiming_a_future_signing_time_is_refused(ws):
    future = clock.format_time(clock.now() + timedelta(hours=2))
    with pytest.raises(TrustError, match="in the future") as info:
        verify_card(
            sign_card(make_card(), own_key(ws), signed_at=future), TrustStore.for_workspace(ws)
        )
    assert info.value.kind == "future"


def test_unknown_key_is_a_trust_error_that_names_the_key(ws):
    with pytest.raises(TrustError, match=OTHER_KEY.key_id) as info:
        verify_card(sign_card(make_card(), OTHER_KEY), TrustStore.for_workspace(ws))
    assert info.value.kind == "unknown" and "keys trust" in str(info.value)


def test_revoked_key_cards_are_excluded_at_load_and_verify_says_which_and_why(ws, tmp_path):
    trust_key(ws, peer_pem(tmp_path), name="acme")
    write_card(ws, sign_card(make_card("mine"), own_key(ws)))
    write_card(ws, sign_card(make_card("theirs"), OTHER_KEY, signed_at=PAST))
    assert sorted(load_verified(ws).cards) == ["mine", "theirs"]
    revoke_key(ws, OTHER_KEY.key_id, reason="laptop stolen")
    loaded = load_verified(ws)
    assert sorted(loaded.cards) == ["mine"]
    [failure] = loaded.failures
    assert failure.server == "theirs" and failure.kind == "revoked"
    assert OTHER_KEY.key_id in failure.reason and "laptop stolen" in failure.reason
    result = run(ws.root, "cards", "verify", "--json")
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report["verified"] == ["mine"]
    assert report["failed"][0]["kind"] == "revoked"
    human = run(ws.root, "cards", "verify")
    assert "(revoked)" in human.output and "theirs.card.json" in human.output


def test_revocation_reaches_a_running_proxy_catalog(ws, tmp_path, monkeypatch):
    from cartograph.proxy import catalog as catalog_module
    from cartograph.proxy.catalog import CardCatalog

    monkeypatch.setattr(catalog_module, "REFRESH_INTERVAL", 0.0)

    trust_key(ws, peer_pem(tmp_path))
    write_card(ws, sign_card(make_card("theirs"), OTHER_KEY, signed_at=PAST))
    catalog = CardCatalog(ws, open_store(ws))
    assert "theirs" in catalog.cards
    revoke_key(ws, OTHER_KEY.key_id, reason="compromised")
    assert catalog.refresh() is True
    assert "theirs" not in catalog.cards
    assert any("revoked" in f.reason for f in catalog.failures)


def test_tampered_revocation_list_fails_every_card_loudly(ws, tmp_path):
    trust_key(ws, peer_pem(tmp_path))
    write_card(ws, sign_card(make_card("mine"), own_key(ws)))
    revoke_key(ws, OTHER_KEY.key_id, reason="compromised")
    path = revocations_file(ws)
    doc = json.loads(path.read_text())
    doc["revoked"] = []  # un-revoke the key without the operator's signature
    path.write_text(json.dumps(doc))
    store = TrustStore.for_workspace(ws)
    assert store.fault is not None and "changed after signing" in store.fault
    loaded = load_verified(ws)
    assert loaded.cards == {}
    assert [f.kind for f in loaded.failures] == ["revocation-list"]
    assert "reset-revocations" in loaded.failures[0].reason
    listing = run(ws.root, "keys", "list")
    assert listing.exit_code == 1 and "TRUST STORE FAULT" in listing.output
    assert run(ws.root, "cards", "verify").exit_code == 1


def test_deleted_or_rolled_back_revocation_list_is_a_fault_not_an_amnesty(ws, tmp_path):
    trust_key(ws, peer_pem(tmp_path))
    revoke_key(ws, OTHER_KEY.key_id)
    first = revocations_file(ws).read_bytes()
    revoke_key(ws, "ed25519:0123456789abcdef")
    revocations_file(ws).write_bytes(first)  # an older, validly signed list
    assert "older list" in (TrustStore.for_workspace(ws).fault or "")
    revocations_file(ws).unlink()
    assert "missing" in (TrustStore.for_workspace(ws).fault or "")
    with pytest.raises(KeyError_, match="cannot revoke"):
        revoke_key(ws, "ed25519:1111111111111111")


def test_reset_revocations_recovers_the_store_and_forgets_every_revocation(ws, tmp_path):
    trust_key(ws, peer_pem(tmp_path))
    revoke_key(ws, OTHER_KEY.key_id)
    revocations_file(ws).write_text("{}")
    assert TrustStore.for_workspace(ws).fault
    assert run(ws.root, "keys", "reset-revocations").exit_code == 2  # needs --yes
    serial = reset_revocations(ws)
    store = TrustStore.for_workspace(ws)
    assert store.fault is None and store.revoked == {} and store.revocation_serial == serial


def test_revocation_list_signed_by_a_peer_key_is_refused(ws, tmp_path):
    from cartograph.trust.revocation import sign_list, unsigned_list, write_list

    trust_key(ws, peer_pem(tmp_path))
    write_list(ws, sign_list(unsigned_list(5, []), OTHER_KEY))  # a trusted peer cannot speak for us
    assert "not one of this workspace's operator keys" in (TrustStore.for_workspace(ws).fault or "")


def test_current_key_cannot_be_revoked_and_key_ids_are_checked(ws):
    with pytest.raises(UsageError, match="rotate"):
        revoke_key(ws, own_key(ws).key_id)
    with pytest.raises(UsageError, match="not a key id"):
        revoke_key(ws, "nonsense")


def test_a_revoked_key_cannot_be_trusted_again(ws, tmp_path):
    revoke_key(ws, OTHER_KEY.key_id)
    with pytest.raises(KeyError_, match="revoked"):
        trust_key(ws, peer_pem(tmp_path))


def test_keys_trust_and_list_through_the_cli(ws, tmp_path):
    pem = peer_pem(tmp_path)
    added = run(
        ws.root, "keys", "trust", str(pem), "--name", "acme", "--not-after", "2030-01-01", "--json"
    )
    assert added.exit_code == 0, added.output
    assert json.loads(added.stdout)["not_after"] == "2030-01-01T00:00:00Z"
    bad = run(ws.root, "keys", "trust", str(pem), "--not-after", "soon")
    assert bad.exit_code == 2 and "ISO 8601" in bad.output
    run(ws.root, "keys", "revoke", "ed25519:0123456789abcdef", "--reason", "test")
    listing = json.loads(run(ws.root, "keys", "list", "--json").stdout)
    by_id = {k["key_id"]: k for k in listing["keys"]}
    assert by_id[OTHER_KEY.key_id]["name"] == "acme"
    assert by_id[OTHER_KEY.key_id]["origin"] == "peer"
    assert by_id[own_key(ws).key_id]["current"] is True
    assert listing["revoked_unknown"][0]["reason"] == "test"
    assert listing["revocation_list"]["serial"] == 1 and listing["fault"] is None


# the sealed layout --------------------------------------------------------------------------


def test_cards_are_stored_with_the_signed_bytes_first(ws):
    card = sign_card(make_card(), own_key(ws))
    raw = write_card(ws, card).read_bytes()
    head, _, _ = raw.rpartition(b',"signature":')
    from cartograph.canonical import canonical

    assert head + b"}" == canonical(card.unsigned_payload())
    verify_stored(raw, TrustStore.for_workspace(ws), source="x")


def test_reindented_card_still_verifies_and_smuggled_members_do_not(ws):
    path = write_card(ws, sign_card(make_card(), own_key(ws)))
    trust = TrustStore.for_workspace(ws)
    data = json.loads(path.read_bytes())
    verify_stored(json.dumps(data, indent=4).encode(), trust, source="pretty")
    raw = path.read_bytes().rstrip()
    smuggled = raw[:-1] + b',"tools":[]}'  # a member after the signature block
    with pytest.raises(VerificationError):
        verify_stored(smuggled, trust, source="smuggled")
    edited = raw.replace(b"wall-clock", b"wall-clack", 1)
    with pytest.raises(VerificationError, match="changed after signing"):
        verify_stored(edited, trust, source="edited")


# verification at scale ----------------------------------------------------------------------


def _many(ws, n):
    key = own_key(ws)
    for i in range(n):
        write_card(ws, sign_card(make_card(f"s{i:04d}", n_tools=1), key))
    files = sorted(ws.cards_dir.iterdir())
    for victim in (files[1], files[n // 2], files[-2]):
        data = victim.read_bytes().replace(b"wall-clock", b"wall-clack", 1)
        victim.write_bytes(data)
    return {f"s{i:04d}" for i in range(n)} - {
        f.name.removesuffix(".card.json") for f in (files[1], files[n // 2], files[-2])
    }


def test_two_process_verification_equals_one_process(ws, monkeypatch):
    expected = _many(ws, 120)
    monkeypatch.setattr(pool, "PARALLEL_MIN", 10)
    if not pool.parallel_enabled(120):
        pytest.skip("one CPU or no fork here")
    parallel = load_verified(ws)
    monkeypatch.setenv(pool.WORKERS_ENV, "0")
    assert not pool.parallel_enabled(120)
    serial = load_verified(ws)
    assert set(parallel.cards) == set(serial.cards) == expected
    assert [(f.path, f.kind) for f in parallel.failures] == [
        (f.path, f.kind) for f in serial.failures
    ]
    assert all(f.kind == "signature" for f in parallel.failures)


def test_a_helper_that_dies_never_means_a_card_goes_unverified(ws, monkeypatch):
    expected = _many(ws, 60)
    monkeypatch.setattr(pool, "PARALLEL_MIN", 10)
    if not pool.parallel_enabled(60):
        pytest.skip("one CPU or no fork here")

    def dying(*args):
        return 3  # exits at once, answering nothing

    monkeypatch.setattr(pool, "_helper_main", dying)
    loaded = load_verified(ws)
    assert set(loaded.cards) == expected and len(loaded.failures) == 3


def test_a_stalled_helper_is_killed_and_its_share_verified_here(ws, monkeypatch):
    expected = _many(ws, 60)
    monkeypatch.setattr(pool, "PARALLEL_MIN", 10)
    monkeypatch.setattr(pool, "STALL_S", 0.5)
    if not pool.parallel_enabled(60):
        pytest.skip("one CPU or no fork here")

    def stalled(*args):
        import time

        time.sleep(120)
        return 0

    monkeypatch.setattr(pool, "_helper_main", stalled)
    loaded = load_verified(ws)
    assert set(loaded.cards) == expected and len(loaded.failures) == 3


def test_the_helper_never_flushes_output_the_parent_had_buffered(ws, monkeypatch, capfd):
    import io
    import sys

    _many(ws, 60)
    monkeypatch.setattr(pool, "PARALLEL_MIN", 10)
    with open(1, "wb", closefd=False) as raw:
        buffered = io.TextIOWrapper(raw, write_through=False)
        monkeypatch.setattr(sys, "stdout", buffered)
        sys.stdout.write("written once")  # still in the buffer when the helper forks
        load_verified(ws)
        sys.stdout.flush()
        monkeypatch.undo()
        buffered.detach()
    assert capfd.readouterr().out.count("written once") == 1


def test_revocation_applies_on_the_parallel_path(ws, tmp_path, monkeypatch):
    monkeypatch.setattr(pool, "PARALLEL_MIN", 10)
    trust_key(ws, peer_pem(tmp_path))
    for i in range(40):
        write_card(ws, sign_card(make_card(f"p{i}", n_tools=1), OTHER_KEY, signed_at=PAST))
    revoke_key(ws, OTHER_KEY.key_id)
    loaded = load_verified(ws)
    assert loaded.cards == {} and {f.kind for f in loaded.failures} == {"revoked"}


# the Ed25519 backends ------------------------------------------------------------------------


def test_libsodium_and_openssl_agree_on_every_verdict():
    from cartograph.trust.keys import SignatureMismatch

    message = b'{"identity":{"server":"clock"}}'
    good = FIXED_KEY.private_key.sign(message)
    cases = [
        (good, message, True),
        (good, message + b" ", False),
        (good[:-1] + bytes([good[-1] ^ 1]), message, False),
        (OTHER_KEY.private_key.sign(message), message, False),
        (good[:63], message, False),
        (good + b"\x00", message, False),
        (b"", message, False),
    ]
    for backend in ("auto", "openssl"):
        for signature, signed, valid in cases:
            if valid:
                FIXED_KEY.public_key.verify(signature, signed, backend=backend)
            else:
                with pytest.raises(SignatureMismatch):
                    FIXED_KEY.public_key.verify(signature, signed, backend=backend)


def test_public_keys_read_and_write_the_pem_cryptography_does(tmp_path):
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec as ec_key

    from cartograph.trust.keys import PublicKey, load_public_key

    theirs = FIXED_KEY.private_key.public_key()
    pem_format = serialization.PublicFormat.SubjectPublicKeyInfo
    pem = theirs.public_bytes(serialization.Encoding.PEM, pem_format)
    ours = PublicKey.of(theirs)
    assert ours.pem() == pem and ours.key_id == FIXED_KEY.key_id
    path = tmp_path / "k.pub"
    path.write_bytes(b"\n" + pem.replace(b"\n", b"\r\n") + b"\n")  # CRLF and blank lines
    assert load_public_key(path) == ours
    ec = ec_key.generate_private_key(ec_key.SECP256R1()).public_key()
    path.write_bytes(ec.public_bytes(serialization.Encoding.PEM, pem_format))
    with pytest.raises(KeyError_, match="not an Ed25519 public key"):
        load_public_key(path)  # another kind of key: cryptography's loader names it
    path.write_bytes(pem[:40] + pem[60:])
    with pytest.raises(KeyError_, match="not a readable PEM public key"):
        load_public_key(path)
    with pytest.raises(ValueError, match="32 bytes"):
        PublicKey(b"short")


def test_verifying_stored_cards_does_not_load_cryptography(tmp_path):
    """A serving proxy only verifies: libsodium and our PEM reader, not the 8 MB package."""
    ws = Workspace(tmp_path / "ws")
    ws.ensure()
    ws.public_key.write_bytes(public_pem(FIXED_KEY.public_key))
    write_card(ws, sign_card(make_card("clock", n_tools=2), FIXED_KEY, signed_at=PAST))
    code = (
        "import sys\n"
        "from cartograph.storage import load_verified\n"
        "from pathlib import Path\n"
        "from cartograph.workspace import Workspace\n"
        f"loaded = load_verified(Workspace(Path({str(ws.root)!r})))\n"
        "assert list(loaded.cards) == ['clock'], loaded.failures\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'cryptography'))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_proxy_status_names_the_card_left_out_and_the_revoked_key(ws, tmp_path):
    import anyio

    from cartograph.config import load_config
    from cartograph.gateway.connector import fleet_connector
    from cartograph.proxy.core import Proxy, ProxySettings
    from cartograph.proxy.status import build_status

    trust_key(ws, peer_pem(tmp_path), name="acme")
    write_card(ws, sign_card(make_card("mine"), own_key(ws)))
    write_card(ws, sign_card(make_card("theirs"), OTHER_KEY, signed_at=PAST))
    revoke_key(ws, OTHER_KEY.key_id, reason="compromised")
    config = tmp_path / "mcp.json"
    config.write_text('{"mcpServers": {}}')
    configured = {"mine", "theirs"}  # status serves configured servers only
    proxy = Proxy(ws, fleet_connector(load_config(config)), ProxySettings(), configured=configured)

    async def status():
        return build_status(proxy)

    out = anyio.run(status).to_json()
    assert [s["server"] for s in out["servers"]] == ["mine"]
    [rejected] = out["cards_rejected"]
    assert rejected["file"] == "theirs.card.json"
    assert OTHER_KEY.key_id in rejected["reason"] and "revoked" in rejected["reason"]


def test_a_trust_json_from_before_the_typed_model_loads_and_keeps_unknown_keys(ws, tmp_path):
    path = trust_file(ws)
    doc = json.loads(path.read_text())
    doc["keys"][0]["origin"] = "operator"
    doc["keys"][0]["name"] = None  # older writers left it out or null: the key id stands in
    doc["note"] = "kept by a newer version"
    path.write_text(json.dumps(doc))
    store = TrustStore.for_workspace(ws)
    assert store.fault is None
    key = own_key(ws)
    assert store.entry(key.key_id).name == key.key_id
    trust_key(ws, peer_pem(tmp_path), name="acme")
    assert json.loads(path.read_text())["note"] == "kept by a newer version"


def test_a_malformed_trust_json_names_the_file_and_the_field_and_trusts_nothing(ws):
    from cartograph.errors import ConfigError
    from cartograph.trust.store import read_trust_doc

    path = trust_file(ws)
    doc = json.loads(path.read_text())
    doc["keys"][0]["origin"] = "friend"
    path.write_text(json.dumps(doc))
    with pytest.raises(ConfigError) as info:
        read_trust_doc(ws)
    assert info.value.file == str(path) and info.value.field == "keys.0.origin"
    store = TrustStore.for_workspace(ws)
    assert store.fault is not None and "keys.0.origin" in store.fault
    write_card(ws, sign_card(make_card("mine"), own_key(ws)))
    assert not load_verified(ws).cards


def test_a_malformed_revocation_list_names_the_field_and_faults_the_store(ws, tmp_path):
    from cartograph.errors import ConfigError
    from cartograph.trust.revocation import parse_revocations

    trust_key(ws, peer_pem(tmp_path))
    revoke_key(ws, OTHER_KEY.key_id, reason="lost")
    path = revocations_file(ws)
    doc, payload = parse_revocations(path)
    assert [r.key_id for r in doc.entries()] == [OTHER_KEY.key_id] and "signature" not in payload
    broken = json.loads(path.read_text())
    broken["serial"] = "many"
    path.write_text(json.dumps(broken))
    with pytest.raises(ConfigError) as info:
        parse_revocations(path)
    assert info.value.file == str(path) and info.value.field == "serial"
    store = TrustStore.for_workspace(ws)
    assert store.fault is not None and "serial" in store.fault

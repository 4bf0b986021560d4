"""profile, end to end: edit, save with dismiss, no double save, failure keeps the draft."""
from features_support import Server


def test_edit_and_save():
    with Server("--latency", "0") as server:
        view = server.state("profile")
        assert view == {"displayName": "", "draft": "",
                        "saveState": {"status": "idle", "message": None}, "canSave": False}
        server.dispatch("profile", {"type": "edit", "name": "Ada Lovelace"})
        assert server.state("profile")["canSave"] is True
        server.dispatch("profile", {"type": "save"})
        view = server.state("profile")
        assert view["displayName"] == "Ada Lovelace"
        assert view["saveState"]["status"] == "saved"
        assert server.events("profile") == [{"type": "dismiss"}]


def test_save_while_saving_sends_one_request_and_cancel_returns_to_idle():
    # A backend that never answers during the test: the first save is still in flight at the
    # second save and at cancelSave however slow the machine (a 200 ms latency was not).
    with Server("--latency", "600000") as server:
        server.dispatch("profile", {"type": "edit", "name": "Grace"})
        server.dispatch("profile", {"type": "save"}, wait="reduced")
        assert server.state("profile")["canSave"] is False
        server.dispatch("profile", {"type": "save"}, wait="reduced")
        server.dispatch("profile", {"type": "cancelSave"})
        view = server.state("profile")
        assert view["saveState"] == {"status": "idle", "message": None}
        assert view["draft"] == "Grace" and view["displayName"] == ""
        # The first save may be cancelled before it reached the server; the second sent nothing.
        assert server.state("backend")["requests"].get("saveProfile", 0) <= 1


def test_a_failure_keeps_the_draft_with_a_safe_message():
    with Server("--latency", "0", "--fail-rate", "1") as server:
        server.dispatch("profile", {"type": "edit", "name": "Grace"})
        server.dispatch("profile", {"type": "save"})
        view = server.state("profile")
        assert view["saveState"] == {
            "status": "failed", "message": "Could not save your profile. Please try again."}
        assert view["draft"] == "Grace"
        server.dispatch("profile", {"type": "dismissError"})
        assert server.state("profile")["saveState"]["status"] == "idle"

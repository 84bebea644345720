"""Who may answer approvals: the owner on a hub (JUPYTERHUB_USER) unless told otherwise, anyone elsewhere."""

import getpass

from opencode_nb.people import Person, approvers


def test_auto_names_the_hub_user_as_owner_and_off_a_hub_lets_anyone_answer():
    rule = approvers("auto", {"JUPYTERHUB_USER": "alice"})
    assert rule is not None and rule.owner == "alice" and rule.source == "JUPYTERHUB_USER"
    assert approvers("auto", {}) is None
    assert approvers("anyone", {"JUPYTERHUB_USER": "alice"}) is None


def test_owner_off_a_hub_is_the_kernels_os_user():
    rule = approvers("owner", {})
    assert rule is not None and rule.owner == getpass.getuser()


def test_only_the_owner_may_answer_and_a_refusal_says_who_may_and_who_you_are():
    rule = approvers("owner", {"JUPYTERHUB_USER": "alice"})
    assert rule is not None
    assert rule.refusal(Person("alice", "Alice Smith")) is None
    refused = rule.refusal(Person("bob", "Bob Jones"))
    assert refused is not None and refused.startswith("Only alice, who owns this server,")
    assert "Bob Jones (bob) tried to answer" in refused and "approvals: anyone" in refused
    unknown = rule.refusal(None)
    assert unknown is not None and "did not say who is signed in" in unknown


def test_a_person_is_shown_by_name_and_username_once():
    assert str(Person("alice", "Alice Smith")) == "Alice Smith (alice)"
    assert str(Person("alice", "alice")) == str(Person("alice")) == "alice"


"""What an undo took stays ready for redo until the same session's next prompt; a redone turn is kept again as the
newest, so it can be undone again (no kernel)."""

from __future__ import annotations

from opencode_nb.kernel.notebook.journal import TURN, Files, Inserted, Journal, Undone


def test_a_new_prompt_of_the_session_drops_its_redo_and_a_redone_turn_is_kept_again():
    journal = Journal()
    turn = journal.begin("ses_1")
    token = TURN.set(turn)
    journal.record(Inserted("a", "x"))
    turn.record(Files(2))
    TURN.reset(token)
    assert turn.files == 2
    journal.remove(turn)
    journal.redoable.append(Undone("ses_1", [turn], True))
    journal.begin("ses_2")
    assert len(journal.redoable) == 1, "another session's prompt leaves this undo redoable"

    journal.put_back(turn)
    assert journal.latest() is turn and turn.id not in journal.undone

    journal.begin("ses_1")
    assert journal.redoable == [], "the session's next prompt builds on the state as it is"


def test_turns_of_a_session_are_found_by_their_prompts_newest_first():
    journal = Journal()
    turns = []
    for message in ("msg_1", "msg_2", "msg_3"):
        turn = journal.begin("ses_1")
        turn.message_id = message
        token = TURN.set(turn)
        journal.record(Inserted(message, ""))
        TURN.reset(token)
        turns.append(turn)
    assert journal.session_turns("ses_1", {"msg_2", "msg_3"}) == [turns[2], turns[1]]
    assert journal.session_turns("ses_2", {"msg_2"}) == []

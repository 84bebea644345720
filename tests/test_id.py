import threading

from opencode_nb import id as ids


def test_ids_carry_their_kind_prefix():
    assert ids.ascending("session").startswith("ses_")
    assert ids.ascending("part").startswith("prt_")


def test_ids_made_in_a_row_sort_in_creation_order():
    made = [ids.ascending("message") for _ in range(5000)]
    assert made == sorted(made)
    assert len(set(made)) == len(made)


def test_ids_from_several_threads_are_unique():
    out: list[str] = []

    def make() -> None:
        out.extend(ids.ascending("part") for _ in range(2000))

    threads = [threading.Thread(target=make) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(out)) == 8000

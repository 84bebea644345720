"""How long the loop waits before trying a failed model call again."""

from opencode_nb.errors import ProviderError
from opencode_nb.provider import RetryPolicy

FLAKY = ProviderError("overloaded", retryable=True)


def test_the_defaults_are_five_attempts_from_one_second_doubling_up_to_thirty():
    policy = RetryPolicy()
    assert (policy.max_attempts, policy.base_s, policy.factor, policy.cap_s) == (5, 1.0, 2.0, 30.0)
    assert [policy.delay(n, FLAKY) for n in range(1, 8)] == [1, 2, 4, 8, 16, 30, 30]


def test_a_servers_retry_after_is_honoured_up_to_the_cap():
    policy = RetryPolicy()
    assert policy.delay(1, ProviderError("x", retryable=True, retry_after_s=7)) == 7
    assert policy.delay(4, ProviderError("x", retryable=True, retry_after_s=0.25)) == 0.25
    assert policy.delay(1, ProviderError("x", retryable=True, retry_after_s=3600)) == 30


def test_only_retryable_errors_are_retried_and_only_so_many_times():
    policy = RetryPolicy(max_attempts=3)
    assert policy.should_retry(1, FLAKY) and policy.should_retry(2, FLAKY)
    assert not policy.should_retry(3, FLAKY)
    assert not policy.should_retry(1, ProviderError("bad key", kind="auth"))


def test_custom_policies_scale_the_backoff():
    policy = RetryPolicy(base_s=0.01, factor=3, cap_s=0.05)
    assert [policy.delay(n, FLAKY) for n in (1, 2, 3)] == [0.01, 0.03, 0.05]

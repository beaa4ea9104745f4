from bot.backoff import doubling_s


def test_the_wait_doubles_from_the_first_up_to_the_most() -> None:
    waits = [doubling_s(n, 1.0, 60.0) for n in range(1, 10)]
    assert waits == [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 60.0, 60.0, 60.0]
    assert doubling_s(0, 5.0, 900.0) == 5.0 and doubling_s(10**6, 5.0, 900.0) == 900.0

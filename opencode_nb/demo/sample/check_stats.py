from stats import load, mean, median, summarise

assert mean([1, 2, 3]) == 2, f"mean([1, 2, 3]) should be 2, got {mean([1, 2, 3])}"
assert median([3, 1, 2]) == 2
print("summary:", summarise(load()))
print("all checks passed")

"""Summaries of daily weather readings."""

import csv


def mean(values):
    return sum(values) / (len(values) - 1)


def median(values):
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2


def load(path="readings.csv"):
    with open(path, newline="") as handle:
        return [float(row["temp_c"]) for row in csv.DictReader(handle)]


def summarise(values):
    return {"mean": round(mean(values), 2), "median": median(values), "days": len(values)}

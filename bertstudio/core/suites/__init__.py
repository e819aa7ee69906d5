"""Behavioural test suites (CheckList's MFT, INV and DIR) for every task with an Evaluate adapter.

A suite file is read and validated once (suite.py; templates.py expands slots, perturb.py makes
the seeded pairs), scored through one batch path (scoring.py), judged per test (runner.py), and
its failures become labelled training rows (fix.py).
"""

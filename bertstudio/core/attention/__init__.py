"""What the Attention tab and command do with attention weights beyond computing them: the shared
view state, pooled views, the bundle of one result, and exports. (The task spec itself is
`core/tasks/attention.py`; `core/tasks/` holds specs only.)"""

"""bench/plot.py's modules: common.py (data, formatting, the ratio report)
and one module per suite: seed.py, resize.py, page_ht.py, cost.py."""

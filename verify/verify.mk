# make verify and verify-mutants: the SPIN models of verify/. Included by the
# top Makefile at the place of its rules (make help lists them there).

# The SPIN models (verify/README.md): every model must pass, every broken
# variant must be caught with a trail; a table of states and times. No build,
# no QEMU. The short runs are also in make test (tests/test_models.py).
verify: ## SPIN models of RCU and the CHT, every broken variant (verify/)
	@PYTHON=$(PYTHON) bash tools/ensure-deps.sh verify
	@$(PYTHON) verify/run.py

# Mutation score of the models: mechanical mutants, SPIN on each (-j2 at
# most, a time bound per run), killed / survived / equivalent per model.
# Long (an hour or more on a busy 2-core host); resumable: results in
# build/verify/mutants/results.jsonl, `verify/mutants.py --report` prints
# the table of what has run.
verify-mutants: ## mutation score of the SPIN models (long; resumable)
	@PYTHON=$(PYTHON) bash tools/ensure-deps.sh verify
	@$(PYTHON) verify/mutants.py -j2

from irr_audit.console import run

run()

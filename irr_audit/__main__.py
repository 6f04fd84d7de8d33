from irr_audit.cli import run

run()

from irr_audit.cli import main

main()

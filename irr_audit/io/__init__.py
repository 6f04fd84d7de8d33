"""What irr-audit reads and writes: every input file read safely within its limits
(files, limits), tables and coding sheets (tables, xlsx, sheets), the collector's
output (collector), and outputs written atomically and safely (outputs, runfolder).
"""

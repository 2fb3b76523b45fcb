import sys
sys.stderr.write("other sitecustomize ran\n")

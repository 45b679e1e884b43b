#!/bin/sh
# base-site.sh INTERPRETER NAME: put INTERPRETER's own site directories on the environment's path, as the .pth
# file NAME in its site-packages (base_provides: a venv made from another venv does not see that venv's packages).
set -eu
here=$(dirname "$0")
# shellcheck source=lib.sh
. "$here/lib.sh"
"$1" - "$ENVGEN_ENV" "$2" <<'PY'
import site, sys
path = "%s/lib/python%d.%d/site-packages/%s" % ((sys.argv[1],) + sys.version_info[:2] + (sys.argv[2],))
with open(path, "w") as out:
    out.write("\n".join(site.getsitepackages()) + "\n")
PY

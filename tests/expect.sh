# Sourced by the shell tests of scripts (tests/*_test.sh): `expect` checks one command's exit
# code and output, `fail` counts a failed check, `finish NAME` reports and exits.
failures=0

# fail MESSAGE: one failed check.
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# expect CODE TEXT COMMAND...: COMMAND exits with CODE and prints TEXT (stdout or stderr).
expect() {
  local code=$1 text=$2 out got
  shift 2
  out=$("$@" 2>&1)
  got=$?
  if [[ $got -ne $code || $out != *"$text"* ]]; then
    fail "$* exited $got (want $code) with:"
    echo "$out" | sed 's/^/  /'
    echo "  (want the text: $text)"
  fi
}

# finish NAME: exit 1 when a check failed.
finish() {
  if [[ $failures -gt 0 ]]; then
    echo "$1: $failures failed"
    exit 1
  fi
  echo "$1: all passed"
}

# Progress bars as build tools draw them: \r redraws, \r ESC[K, backspace.
bar() { # width percent
	local n=$(( $2 * $1 / 100 )) s=''
	for ((j = 0; j < n; j++)); do s+='#'; done
	printf '\r[%-*s] %3d%%' "$1" "$s" "$2"
}
echo 'downloading:'
for i in $(seq 0 5 100); do bar 30 "$i"; sleep 0.01; done
printf '\n'
echo 'compiling:'
for i in $(seq 0 10 100); do
	printf '\r\033[K\033[32m%s\033[0m %d/10 files' "$(printf '=%.0s' $(seq 0 $((i / 10))))" $((i / 10))
	sleep 0.01
done
printf '\n'
printf 'spinner: '
for c in '|' '/' '-' '\' '|' '/'; do printf '%s\b' "$c"; sleep 0.01; done
printf 'done\n'
printf 'half-drawn: [#####     ]  50%%'

# A deep scrollback: lines of varied lengths and colors, some wrapping.
for i in $(seq 1 1000); do
	n=$(( (i * 37) % 130 ))
	printf '\033[3%dm%04d\033[0m %s\n' $((i % 8)) "$i" "$(head -c "$n" /dev/zero | tr '\0' "$(printf "\\$(printf '%03o' $((97 + i % 26)))")")"
done

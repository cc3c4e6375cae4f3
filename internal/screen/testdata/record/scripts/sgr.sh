# SGR: every color form and attribute, each followed by its reset.
for c in 30 31 32 33 34 35 36 37 90 91 92 93 94 95 96 97; do printf '\033[%dm%d\033[39m ' "$c" "$c"; done; echo
for c in 40 41 42 43 44 45 46 47 100 101 102 103 104 105 106 107; do printf '\033[%dm%d\033[49m ' "$c" "$c"; done; echo
for r in 0 1 2 3 4 5 6 7; do
	for c in $(seq $((r * 32)) $((r * 32 + 31))); do printf '\033[48;5;%dm \033[38;5;%dm%s\033[0m' "$c" "$((255 - c))" "$((c % 10))"; done; echo
done
for i in $(seq 0 8 255); do printf '\033[38;2;%d;%d;%dm#\033[48;2;%d;0;%dm \033[0m' "$i" "$((255 - i))" 128 "$i" "$((255 - i))"; done; echo
printf '\033[38:2::255:0:0mcolon rgb\033[0m \033[38:2:0:255:0mno colorspace\033[0m \033[38:5:208mcolon 256\033[0m \033[48:2::0:0:255mbg colon\033[0m\n'
printf '\033[1mbold\033[22m \033[2mdim\033[22m \033[3mitalic\033[23m \033[4munder\033[24m \033[5mblink\033[25m \033[7minverse\033[27m \033[8mhidden\033[28m \033[9mstrike\033[29m \033[53mover\033[55m\n'
printf '\033[4:3mcurly\033[4:0m \033[21mdouble\033[24m \033[4:2mdouble2\033[24m \033[6mrapid\033[25m \033[58;5;196mulcolor\033[59m\n'
printf '\033[1;2;3;4;5;7;9;53;31;42mall at once\033[0m \033[1;2mbold+dim\033[22mnone\n'
printf '\033[1;31mbold red\033[mplain \033[38;5;1mp1\033[38;5;9mp9\033[38;5;16mp16\033[0m\n'
printf '\033[7;31;42minverse colors\033[0m \033[8;33mhidden yellow\033[0m \033[38;2;1;2;3mrgb\033[39mdefault\n'
printf '\033[31;1m;\033[0m\033[;1mempty param\033[0m \033[38;5mbad\033[0m \033[38;2;1;2mshort\033[0m \033[999mnoop\033[0m\n'
printf '\033[44mbg fill to EOL\033[K\033[0m\n'
printf '\033[41m  red bg spaces  \033[0m then plain\n'
printf '\033[1m\033[33mbright by bold?\033[0m \033[1;38;5;3mbold p3\033[0m\n'
printf '\033[30;47mblack on white\033[0m \033[97;40mwhite on black\033[0m\n'
printf '\033[4;58:2::255:0:0mrgb underline color\033[0m\n'
printf '\033[48;5;22m\n\nnewlines with a bg set\033[0m\n'
printf '\033[3;4;9mends with attributes on'

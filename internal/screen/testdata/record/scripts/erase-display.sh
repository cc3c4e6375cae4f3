# ED 0/1/2/3 with scrollback and a background color set.
for i in $(seq 1 40); do printf 'line %02d xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n' "$i"; done
printf '\033[5;10H\033[42m\033[J\033[0mED0 from 5;10'
printf '\033[3;20H\033[43m\033[1J\033[0mED1 to 3;20'
for i in $(seq 1 6); do printf '\nmore %d' "$i"; done
printf '\033[2;5H\033[2J'                  # ED2: the screen only, cursor stays
printf 'after ED2 at 2;5\n'
for i in $(seq 1 20); do printf 'after %02d\n' "$i"; done
printf '\033[3J'                           # ED3: the scrollback
printf '\033[45m\033[10;1H\033[0J\033[0m'
printf '\033[12;1Hlast words'

# IRM: characters push the rest of the line right and off the margin.
printf '0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz01234567\n'
printf '0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz01234567\r'
printf '\033[4hINSERTED\033[4l\n'
printf 'abcdef\033[3D\033[4h\033[1mXY\033[0m\033[4l\n'
printf 'wide: abcdef\033[4D\033[4h中文\033[4l\n'
printf '%s\033[5D\033[4hpush a wide char off: 中\033[4l\n' "$(printf 'w%.0s' $(seq 1 78))中"
printf 'replace mode again: abcdef\033[3DXYZ\n'
printf 'ends in insert mode: 123456\033[3D\033[4hI'

# DECOM: positions count from the top margin and stay inside the region.
for i in $(seq 1 24); do printf '\033[%d;1Hrow %02d' "$i" "$i"; done
printf '\033[6;18r\033[?6h'
printf '\033[1;1Horigin 1;1'
printf '\033[3;10Hat 3;10'
printf '\033[99;1Hclamped to the bottom margin'
printf '\033[1;1H\033[5Aup is clamped'
printf '\033[7;1H\0337'          # save inside the region
printf '\033[?6l\033[1;1Hhome without origin'
printf '\033[?6h\0338saved'        # restore
printf '\033[13;40H'             # ends inside the region with DECOM on

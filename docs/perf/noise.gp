# tbench plot: samples of the 8 noisiest cases (by MAD / median), each divided by its median
# Render it again: cd to this folder, then: gnuplot noise.gp
set encoding utf8
set title 'samples of the 8 noisiest cases (by MAD / median), each divided by its median' noenhanced
set key below left horizontal maxcols 2 maxrows 40 noenhanced
set grid
set style fill solid 0.4 border -1
set style boxplot outliers pointtype 7
set pointsize 0.4
set boxwidth 0.6
unset key
set ylabel 'sample / median of the case'
set xrange [0.3:8.7]
set bmargin 14
set xlabel 'case (numbered below)'
set xtics 1
set label 2 '1: add_relu/1000000,1000000/f32/cpu[isa=scalar,threads=2]' at screen 0.02, screen 0.2036 font ',8' noenhanced
set label 3 '2: matmul/256x256,256x256/f32/cpu[isa=scalar,threads=2]' at screen 0.02, screen 0.1796 font ',8' noenhanced
set label 4 '3: matmul/64x64,64x64/f32/cpu[isa=scalar,threads=2]' at screen 0.02, screen 0.1557 font ',8' noenhanced
set label 5 '4: rand_normal[mean=0,std=1,seed=0]/1000000/f32/cpu[isa=auto,threads=2]' at screen 0.02, screen 0.1317 font ',8' noenhanced
set label 6 '5: log_softmax[axis=-1]/1024x10/f32/cpu[isa=scalar,threads=2]' at screen 0.02, screen 0.1078 font ',8' noenhanced
set label 7 '6: zeros/4000000/f32/cpu[isa=scalar,threads=1]' at screen 0.02, screen 0.0838 font ',8' noenhanced
set label 8 '7: add@alloc/4000000,4000000/f32/cpu[isa=auto,threads=1]' at screen 0.02, screen 0.0599 font ',8' noenhanced
set label 9 '8: add@alloc/4000000,4000000/f32/cpu[isa=scalar,threads=1]' at screen 0.02, screen 0.0359 font ',8' noenhanced
set label 1 'box: quartiles; whiskers: 1.5 IQR; points: outliers' at screen 0.02, screen 0.2275 font ',8'
set terminal pngcairo size 900,668 font 'sans,9' noenhanced
set output 'noise.png'
plot for [i=0:7] 'noise.dat' index i using (i+1):1 with boxplot lc i+1
set output
